package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"buddi/config"
	"buddi/doctor"
	"buddi/version"
)

// startHint is how the owner starts buddi, said wherever a command finds none running.
const startHint = "start it with `buddi serve` (or `buddi service install`)"

// notRunning is the answer of a command that works only through the running buddi when none
// answers: one sentence, and the exit code of "do this first". No database is opened for it.
func notRunning() error {
	return &exitError{code: doctor.ExitDoFirst, err: errors.New("buddi is not running: " + startHint)}
}

// commandGroup is a heading of `buddi help` and the top-level commands under it.
type commandGroup struct {
	key, title string
	commands   []string
}

// commandGroups orders `buddi help`: what a newcomer needs first, the plumbing last. A
// command missing here is listed at the end of the last group.
var commandGroups = []commandGroup{
	{"start", "Start:", []string{"init", "serve", "service", "dashboard", "doctor"}},
	{"talk", "Talk:", []string{"chat", "ask", "telegram", "tailnet", "email"}},
	{"work", "Work and approvals:", []string{"approvals", "permissions", "missions", "reminders", "sentinels", "sources", "jobs", "pause", "resume"}},
	{"agents", "Agents and plugins:", []string{"agents", "accounts", "vault", "plugins", "mcp", "tokens", "developer", "web"}},
	{"operate", "Operate:", []string{"db", "backup", "recovery", "logs", "bench", "completion", "help", "version"}},
}

// helpOptions keeps `buddi help` to one line a command: a command's subcommands are listed
// by `buddi help COMMAND`.
var helpOptions = kong.HelpOptions{NoExpandSubcommands: true, Compact: true}

// groupCommands puts each top-level command under its heading of commandGroups and orders
// them so, for Kong's help printer.
func groupCommands(k *kong.Kong) error {
	index, rank := map[string]int{}, map[string]int{}
	for i, g := range commandGroups {
		for j, name := range g.commands {
			index[name], rank[name] = i, j
		}
	}
	groups := make([]*kong.Group, len(commandGroups))
	for i, g := range commandGroups {
		groups[i] = &kong.Group{Key: g.key, Title: g.title}
	}
	sub := &kong.Group{Key: "commands", Title: "Commands:"} // a command's subcommands: one list
	byGroup := make([][]*kong.Node, len(commandGroups))
	for _, n := range k.Model.Children {
		i, ok := index[n.Name]
		if !ok {
			i = len(commandGroups) - 1
		}
		n.Group = groups[i]
		byGroup[i] = append(byGroup[i], n)
		underCommands(n.Children, sub)
	}
	ordered := k.Model.Children[:0]
	for _, nodes := range byGroup {
		sort.SliceStable(nodes, func(a, b int) bool {
			ra, oka := rank[nodes[a].Name]
			rb, okb := rank[nodes[b].Name]
			return oka && (!okb || ra < rb)
		})
		ordered = append(ordered, nodes...)
	}
	k.Model.Children = ordered
	return nil
}

// underCommands puts nodes and those below them under g (else they would show under their
// top-level command's heading).
func underCommands(nodes []*kong.Node, g *kong.Group) {
	for _, n := range nodes {
		n.Group = g
		underCommands(n.Children, g)
	}
}

// newcomerCommands are the five commands the summary names, with what each does.
var newcomerCommands = [][2]string{
	{"buddi init --serve", "set buddi up and start it: a model account, the agents, a first answer"},
	{"buddi chat", "talk with an agent (one question: buddi ask \"…\")"},
	{"buddi dashboard", "a sign-in link to the dashboard for your browser"},
	{"buddi doctor", "check the installation; each problem with what to do"},
	{"buddi help", "every command, grouped (buddi help COMMAND for one)"},
}

// printSummary is what `buddi` alone prints: what buddi is, whether one is running (asked of
// its /api/health with a short timeout; no database is opened), and where to begin.
func printSummary(stdout io.Writer) int {
	fmt.Fprintf(stdout, "buddi %s: a personal agent platform that runs on your own machine.\n\n", version.Version)
	fmt.Fprintf(stdout, "Status: %s\n\n", summaryStatus())
	fmt.Fprintln(stdout, "Start here:")
	for _, c := range newcomerCommands {
		fmt.Fprintf(stdout, "  %-20s %s\n", c[0], c[1])
	}
	fmt.Fprintln(stdout, "\nShell completion: buddi completion bash|zsh|fish.")
	return doctor.ExitOK
}

// summaryStatus says in one sentence whether a buddi runs for this home.
func summaryStatus() string {
	cfg, err := config.FromEnv()
	if err != nil {
		return err.Error() + "."
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	rep, err := doctor.Serving(ctx, cfg)
	switch {
	case errors.Is(err, doctor.ErrNotServing):
		if _, serr := os.Stat(cfg.Home); errors.Is(serr, os.ErrNotExist) {
			return fmt.Sprintf("not set up in %s yet: begin with `buddi init --serve`.", cfg.Home)
		}
		return "not running: " + startHint + "."
	case err != nil:
		return strings.TrimSuffix(err.Error(), ".") + "."
	}
	s := fmt.Sprintf("running at http://%s (pid %d, up %s", rep.Listener, rep.Pid, (time.Duration(rep.UptimeSeconds) * time.Second).String())
	if rep.Version != version.Version {
		s += ", buddi " + rep.Version
	}
	s += ")"
	switch {
	case rep.Recovery != "":
		s += ", in recovery mode: see `buddi recovery`"
	case rep.Status != "ok" && len(rep.Problems) > 0:
		s += ", degraded: " + strings.TrimSuffix(rep.Problems[0], ".") + " (see `buddi doctor`)"
	case rep.Status != "ok":
		s += ", degraded: see `buddi doctor`"
	}
	return s + "."
}

// helpCmd prints the help of the whole command line or of one command.
type helpCmd struct {
	Command []string `arg:"" optional:"" help:"The command to explain, like missions or missions add."`
}

// Run prints the help Kong makes of the command's model: the grouped commands, or one
// command's flags and subcommands.
func (c helpCmd) Run(k *kong.Kong) error {
	kctx, err := kong.Trace(k, c.Command)
	if err == nil {
		err = kctx.Error
	}
	if err != nil {
		return &exitError{code: doctor.ExitUsage, err: fmt.Errorf("%q is not a buddi command: run `buddi help` for the commands", strings.Join(c.Command, " "))}
	}
	// A command with a default subcommand (missions runs missions list) is explained
	// itself, with its subcommands, not its default.
	named := k.Model.Node
	for _, w := range c.Command {
		child := findChild(named, w)
		if child == nil {
			break
		}
		named = child
	}
	for len(kctx.Path) > 1 && kctx.Selected() != nil && kctx.Selected() != named {
		kctx.Path = kctx.Path[:len(kctx.Path)-1]
	}
	return kctx.PrintUsage(false)
}

// usageError prints a parse error: one sentence, and the short usage of the command it is
// about (a command that does not exist gets only the sentence and where to look).
func usageError(parser *kong.Kong, err error, stderr io.Writer) int {
	var pe *kong.ParseError
	if !errors.As(err, &pe) || pe.Context == nil || pe.Context.Selected() == nil {
		msg := err.Error()
		if rest, ok := strings.CutPrefix(msg, "unexpected argument "); ok {
			msg = fmt.Sprintf("%q is not a buddi command", rest)
			if name, hint, ok := strings.Cut(rest, ", did you mean "); ok {
				msg = fmt.Sprintf("%q is not a buddi command (did you mean %s)", name, strings.TrimSuffix(hint, "?"))
			}
		}
		fmt.Fprintf(stderr, "buddi: %s: run `buddi help` for the commands\n", msg)
		return doctor.ExitUsage
	}
	parser.Errorf("%s", err)
	parser.Stdout = stderr // the usage too: standard output stays the command's, parseable with --json
	_ = pe.Context.PrintUsage(true)
	return doctor.ExitUsage
}
