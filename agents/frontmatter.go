package agents

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// maxFileSize bounds one agent or skill file; a persona or a procedure is a page of text.
const maxFileSize = 1 << 20

// frontmatter is a markdown file split into its YAML frontmatter, key by key in file order,
// and its body.
type frontmatter struct {
	present bool
	fields  []field
	body    string
}

// field is one top-level key of the frontmatter with its value and its line in the file.
type field struct {
	key   string
	line  int
	value *yaml.Node
}

var (
	yamlLine   = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	atHandle   = regexp.MustCompile(`(?m)^\s*handle\s*:\s*@`)
	closeFence = map[string]bool{"---": true, "...": true}
)

// splitFrontmatter parses a file's frontmatter. A file that does not start with a line of
// three dashes has none (present is false) and is all body. The returned string is a plain
// sentence when the file cannot be read as frontmatter and markdown.
func splitFrontmatter(data []byte) (frontmatter, string) {
	if len(data) > maxFileSize {
		return frontmatter{}, fmt.Sprintf("the file is %d bytes, larger than the %d an agent or skill file may be", len(data), maxFileSize)
	}
	if !utf8.Valid(data) {
		return frontmatter{}, "the file is not UTF-8 text"
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if strings.TrimRight(lines[0], " \t") != "---" {
		return frontmatter{body: strings.TrimSpace(text)}, ""
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if closeFence[strings.TrimRight(lines[i], " \t")] {
			end = i
			break
		}
	}
	if end < 0 {
		return frontmatter{}, "the frontmatter that opens on line 1 is never closed; end it with a line of three dashes (---)"
	}
	fm := frontmatter{present: true, body: strings.TrimSpace(strings.Join(lines[end+1:], "\n"))}
	yamlText := strings.Join(lines[1:end], "\n")
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(yamlText), &doc); err != nil {
		msg := "the frontmatter is not valid YAML (" + yamlError(err) + ")"
		if atHandle.MatchString(yamlText) {
			msg += `; a value that starts with @ must be quoted, as in handle: "@dev"`
		}
		return frontmatter{}, msg
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return fm, "" // empty frontmatter: no keys
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return fm, ""
	}
	if root.Kind != yaml.MappingNode {
		return frontmatter{}, "the frontmatter must be key: value lines, like id: concierge"
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		line := k.Line + 1 // the YAML starts on the file's second line
		if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
			return frontmatter{}, fmt.Sprintf("line %d of the frontmatter has a key that is not a plain name", line)
		}
		if first, dup := seen[k.Value]; dup {
			return frontmatter{}, fmt.Sprintf("the frontmatter key %s appears twice, on lines %d and %d", k.Value, first, line)
		}
		seen[k.Value] = line
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		fm.fields = append(fm.fields, field{key: k.Value, line: line, value: v})
	}
	return fm, ""
}

// yamlError renders a YAML error with the line counted in the file, not in the frontmatter.
func yamlError(err error) string {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return fmt.Sprintf("line %d: %s", n+1, m[2])
	}
	return strings.TrimPrefix(msg, "yaml: ")
}

// isNull reports whether a value is empty: "key:" with nothing after it, or null.
func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// stringValue reads a scalar as text. Empty or null is "".
func (f field) stringValue() (string, string) {
	if isNull(f.value) {
		return "", ""
	}
	if f.value.Kind != yaml.ScalarNode {
		return "", fmt.Sprintf("%s on line %d must be a single value, not a list or a map", f.key, f.line)
	}
	return strings.TrimSpace(f.value.Value), ""
}

// listValue reads a list of scalars. Null is an empty list; so is [].
func (f field) listValue(example string) ([]string, string) {
	if isNull(f.value) {
		return nil, ""
	}
	if f.value.Kind != yaml.SequenceNode {
		return nil, fmt.Sprintf("%s on line %d must be a list, as in %s: [%s]", f.key, f.line, f.key, example)
	}
	out := make([]string, 0, len(f.value.Content))
	for _, item := range f.value.Content {
		if item.Kind == yaml.AliasNode && item.Alias != nil {
			item = item.Alias
		}
		if item.Kind != yaml.ScalarNode || isNull(item) {
			return nil, fmt.Sprintf("%s on line %d must be a list of names, as in %s: [%s]", f.key, f.line, f.key, example)
		}
		out = append(out, strings.TrimSpace(item.Value))
	}
	return out, ""
}

// boolValue reads true or false. Null is false.
func (f field) boolValue() (bool, string) {
	if isNull(f.value) {
		return false, ""
	}
	var b bool
	if f.value.Kind != yaml.ScalarNode || f.value.Tag != "!!bool" || f.value.Decode(&b) != nil {
		return false, fmt.Sprintf("%s on line %d must be true or false", f.key, f.line)
	}
	return b, ""
}

// intValue reads a whole number. Null is 0.
func (f field) intValue() (int, string) {
	if isNull(f.value) {
		return 0, ""
	}
	var n int
	if f.value.Kind != yaml.ScalarNode || f.value.Tag != "!!int" || f.value.Decode(&n) != nil {
		return 0, fmt.Sprintf("%s on line %d must be a whole number", f.key, f.line)
	}
	return n, ""
}
