package registry

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"buddi/core/views"
	"buddi/plugins"
)

// DefaultTimeout bounds a tool's Execute, Describe and TierFor when its Spec gives no Timeout.
const DefaultTimeout = 2 * time.Minute

// Names: a plugin is lower case letters, digits, '_' and '-', starting with a letter; a
// tool is "<plugin>.<verb>" with a verb of lower case letters, digits and '_'. Both fit the
// model providers' tool names once the dot is mapped on the wire.
var (
	pluginName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
	verbName   = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
)

// Registry holds every registered tool with its declaration, its compiled schema and its
// plugin's version. It is immutable after New and safe for concurrent use.
type Registry struct {
	entries map[string]*entry
	names   []string // sorted
	views   map[string]plugins.ViewDescriptor
}

// entry is one registered tool.
type entry struct {
	tool    plugins.Tool
	spec    plugins.Spec // the registry's own copy, taken once at New
	version string
	schema  *jsonschema.Schema
	effects map[plugins.Effect]bool
	hosts   []string // the hosts its plugin's network lines name
}

// New builds a registry from manifests. It refuses, naming the plugin and the tool: a manifest
// without a valid name or a version, the same plugin twice, a nil tool, a tool name that is not
// "<plugin>.<verb>" for its own manifest, the same tool name twice (across manifests too), a
// tool that declares no effects or an unknown one, an unknown tier, a negative timeout, and an
// argument schema that is not a JSON object of type "object" or does not compile, and a
// view descriptor that core/views refuses (its error names the field), or a second one for a
// tool. Every problem found is reported, as [LoadError] values joined with errors.Join.
func New(manifests ...plugins.Manifest) (*Registry, error) {
	r := &Registry{entries: map[string]*entry{}, views: map[string]plugins.ViewDescriptor{}}
	var errs []error
	seen := map[string]bool{}
	for _, m := range manifests {
		if !pluginName.MatchString(m.Name) {
			errs = append(errs, &LoadError{Plugin: m.Name, Err: fmt.Errorf("name must match %s", pluginName)})
			continue
		}
		if seen[m.Name] {
			// Reported, and its tools still checked, so each clash is named.
			errs = append(errs, &LoadError{Plugin: m.Name, Err: errors.New("declared by more than one manifest")})
		}
		seen[m.Name] = true
		if strings.TrimSpace(m.Version) == "" {
			errs = append(errs, &LoadError{Plugin: m.Name, Err: errors.New("declares no version (it is part of every action's hash)")})
			continue
		}
		var loaded []string // the manifest's tools, by name, that loaded
		for i, tool := range m.Tools {
			e, err := load(m, tool)
			if err != nil {
				name := e.spec.Name
				if name == "" {
					name = fmt.Sprintf("#%d", i)
				}
				errs = append(errs, &LoadError{Plugin: m.Name, Tool: name, Err: err})
				continue
			}
			if _, dup := r.entries[e.spec.Name]; dup {
				errs = append(errs, &LoadError{Plugin: m.Name, Tool: e.spec.Name, Err: errors.New("is registered twice")})
				continue
			}
			r.entries[e.spec.Name] = e
			r.names = append(r.names, e.spec.Name)
			loaded = append(loaded, e.spec.Name)
		}
		errs = append(errs, r.loadViews(m, loaded)...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.Sort(r.names)
	return r, nil
}

// load checks one tool of manifest m and compiles its schema. The entry it returns carries
// the spec's name even when err is not nil, so the error can name the tool.
func load(m plugins.Manifest, tool plugins.Tool) (e *entry, err error) {
	e = &entry{}
	if tool == nil {
		return e, errors.New("is nil")
	}
	spec, err := specOf(tool)
	if err != nil {
		return e, err
	}
	e.spec = spec
	plugin, verb, ok := strings.Cut(spec.Name, ".")
	if !ok || plugin != m.Name || !verbName.MatchString(verb) {
		return e, fmt.Errorf("name must be %q followed by a verb matching %s", m.Name+".", verbName)
	}
	if len(spec.Effects) == 0 {
		return e, errors.New("declares no effects")
	}
	e.effects = map[plugins.Effect]bool{}
	for _, eff := range spec.Effects {
		if !eff.Valid() {
			return e, fmt.Errorf("declares an unknown effect %q", eff)
		}
		e.effects[eff] = true
	}
	switch spec.Tier {
	case plugins.TierAuto, plugins.TierGated, plugins.TierSession, plugins.TierDraft:
	default:
		return e, fmt.Errorf("declares an unknown tier %q (want auto, gated, session or draft)", spec.Tier)
	}
	if spec.Timeout < 0 {
		return e, fmt.Errorf("declares a negative timeout %v", spec.Timeout)
	}
	sch, err := compileSchema(spec.Name, spec.Schema)
	if err != nil {
		return e, err
	}
	e.tool, e.version, e.schema, e.hosts = tool, m.Version, sch, NetworkHosts(m.Network)
	return e, nil
}

// specOf takes a copy of the tool's Spec, refusing a Spec method that panics.
func specOf(tool plugins.Tool) (spec plugins.Spec, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("its Spec panicked: %v", p)
		}
	}()
	return cloneSpec(tool.Spec()), nil
}

// cloneSpec copies s so that neither the plugin nor a caller shares its slices with the
// registry.
func cloneSpec(s plugins.Spec) plugins.Spec {
	s.Schema = slices.Clone(s.Schema)
	s.Effects = slices.Clone(s.Effects)
	return s
}

// timeout is the tool's bound on one call.
func (e *entry) timeout() time.Duration {
	if e.spec.Timeout > 0 {
		return e.spec.Timeout
	}
	return DefaultTimeout
}

// Tools returns every tool's declaration, sorted by name. The slice and the specs are copies.
func (r *Registry) Tools() []plugins.Spec {
	out := make([]plugins.Spec, 0, len(r.names))
	for _, name := range r.names {
		out = append(out, cloneSpec(r.entries[name].spec))
	}
	return out
}

// Lookup returns the tool registered under name.
func (r *Registry) Lookup(name string) (plugins.Tool, bool) {
	e, ok := r.entries[name]
	if !ok {
		return nil, false
	}
	return e.tool, true
}

// Hosts returns the hosts the plugin that contributes the tool name declares it reaches (its
// manifest's network lines); nil when it declares none or no such tool is registered.
func (r *Registry) Hosts(name string) []string {
	if e, ok := r.entries[name]; ok {
		return slices.Clone(e.hosts)
	}
	return nil
}

// NetworkHosts reads the hosts out of a manifest's network lines ("api.github.com: repository
// names and issue text"): what each line says before its first colon, trimmed, in order,
// without repeats. A line with no colon is a host alone.
func NetworkHosts(lines []string) []string {
	var out []string
	for _, l := range lines {
		h, _, _ := strings.Cut(l, ":")
		if h = strings.TrimSpace(h); h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// Version returns the version of the plugin that contributes the tool name, which is part of
// every action's hash, or "" when no such tool is registered.
func (r *Registry) Version(name string) string {
	if e, ok := r.entries[name]; ok {
		return e.version
	}
	return ""
}

// loadViews checks m's view descriptors, for the tools of m that loaded, and keeps them by
// tool.
func (r *Registry) loadViews(m plugins.Manifest, tools []string) []error {
	var errs []error
	for i, d := range m.Views {
		name := d.Tool
		if name == "" {
			name = fmt.Sprintf("view #%d", i)
		}
		if err := views.Check(m.Name, tools, d); err != nil {
			errs = append(errs, &LoadError{Plugin: m.Name, Tool: name, Err: err})
			continue
		}
		if _, dup := r.views[d.Tool]; dup {
			errs = append(errs, &LoadError{Plugin: m.Name, Tool: name, Err: &views.FieldError{Field: "Tool", Reason: "has a second view descriptor; a tool has one"}})
			continue
		}
		r.views[d.Tool] = d
	}
	return errs
}

// View returns the plugin's view descriptor for tool, if it declared one.
func (r *Registry) View(tool string) (plugins.ViewDescriptor, bool) {
	if r == nil {
		return plugins.ViewDescriptor{}, false
	}
	d, ok := r.views[tool]
	return d, ok
}
