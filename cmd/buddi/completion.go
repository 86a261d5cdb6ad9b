package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/alecthomas/kong"
)

// completionCmd prints a shell's completion script. The script asks `buddi __complete` for
// the words that fit, so commands, subcommands, flags and their values always match this
// binary.
type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell: bash, zsh or fish."`
}

// Run prints the script for the shell.
func (c completionCmd) Run(env *runEnv) error {
	script := map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}[c.Shell]
	_, err := fmt.Fprint(env.stdout, script)
	return err
}

// completeCmd is what the completion scripts call: the words typed after `buddi` up to the
// cursor, the last one being the word under completion (possibly empty).
type completeCmd struct {
	Words []string `arg:"" optional:"" passthrough:""`
}

// Run prints the candidates, one a line: the word, a tab, and a short description.
func (c completeCmd) Run(env *runEnv, k *kong.Kong) error {
	for _, cand := range completions(k.Model, c.Words) {
		if cand.help == "" {
			fmt.Fprintln(env.stdout, cand.word)
			continue
		}
		fmt.Fprintf(env.stdout, "%s\t%s\n", cand.word, cand.help)
	}
	return nil
}

// candidate is one word a completion offers.
type candidate struct {
	word string
	help string // the first sentence of its help, for the shells that show it
}

// completions walks Kong's model along words (all but the last, which is being typed) and
// returns what may come next: a flag's values after a flag that takes one, the flags of the
// command reached when the word starts with a dash, else its subcommands and the values of
// its next positional argument.
func completions(app *kong.Application, words []string) []candidate {
	if len(words) == 0 {
		words = []string{""}
	}
	cur, before := words[len(words)-1], words[:len(words)-1]
	node := app.Node
	var pending *kong.Flag // a flag whose value is the next word
	positional := 0
	rest := false // after "--": no more flags
	for i, w := range before {
		switch {
		case pending != nil:
			if w == "=" { // bash splits --flag=value at the equals sign
				continue
			}
			pending = nil
		case !rest && w == "--":
			rest = true
		case !rest && len(w) > 1 && strings.HasPrefix(w, "-"):
			if strings.Contains(w, "=") {
				continue
			}
			if f := findFlag(node, w); f != nil && !f.IsBool() && !f.IsCounter() {
				pending = f
			}
		default:
			if child := findChild(node, w); child != nil && positional == 0 && !rest {
				node, positional = child, 0
				if child.Name == "help" && child.Parent == app.Node {
					// `buddi help missions add`: the rest names a command.
					return completions(app, words[i+1:])
				}
				continue
			}
			positional++
		}
	}
	if pending != nil {
		if cur == "=" {
			cur = ""
		}
		return values(pending.Value, "", cur)
	}
	if !rest && strings.HasPrefix(cur, "-") {
		if name, val, ok := strings.Cut(cur, "="); ok {
			if f := findFlag(node, name); f != nil {
				return values(f.Value, name+"=", val)
			}
			return nil
		}
		return flagCandidates(node, cur)
	}
	var out []candidate
	if positional == 0 && !rest {
		for _, child := range node.Children {
			if child.Hidden || child.Type != kong.CommandNode {
				continue
			}
			for _, name := range append([]string{child.Name}, child.Aliases...) {
				if strings.HasPrefix(name, cur) {
					out = append(out, candidate{word: name, help: firstSentence(child.Help)})
				}
			}
		}
	}
	if arg := positionalAt(node, positional); arg != nil {
		out = append(out, values(arg, "", cur)...)
	}
	return out
}

// findChild is node's subcommand named (or aliased) name, or nil.
func findChild(node *kong.Node, name string) *kong.Node {
	for _, child := range node.Children {
		if child.Type != kong.CommandNode {
			continue
		}
		if child.Name == name {
			return child
		}
		for _, a := range child.Aliases {
			if a == name {
				return child
			}
		}
	}
	return nil
}

// findFlag is the flag spelt arg (--name or -x) on node or a command above it, or nil.
func findFlag(node *kong.Node, arg string) *kong.Flag {
	for _, group := range node.AllFlags(false) {
		for _, f := range group {
			if arg == "--"+f.Name || (f.Short != 0 && arg == "-"+string(f.Short)) {
				return f
			}
			for _, a := range f.Aliases {
				if arg == "--"+a {
					return f
				}
			}
		}
	}
	return nil
}

// flagCandidates are the visible flags of node and the commands above it that start with
// prefix, long names only.
func flagCandidates(node *kong.Node, prefix string) []candidate {
	var out []candidate
	seen := map[string]bool{}
	for _, group := range node.AllFlags(true) {
		for _, f := range group {
			word := "--" + f.Name
			if seen[word] || !strings.HasPrefix(word, prefix) {
				continue
			}
			seen[word] = true
			out = append(out, candidate{word: word, help: firstSentence(f.Help)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].word < out[j].word })
	return out
}

// positionalAt is node's positional argument at index i (a trailing slice argument takes
// every index from its own on), or nil.
func positionalAt(node *kong.Node, i int) *kong.Value {
	if len(node.Positional) == 0 {
		return nil
	}
	if i < len(node.Positional) {
		return node.Positional[i]
	}
	if last := node.Positional[len(node.Positional)-1]; last.IsSlice() {
		return last
	}
	return nil
}

// values are v's enum values that start with prefix, each written after lead.
func values(v *kong.Value, lead, prefix string) []candidate {
	if v.Enum == "" {
		return nil
	}
	var out []candidate
	for _, e := range strings.Split(v.Enum, ",") {
		e = strings.TrimSpace(e)
		if e != "" && strings.HasPrefix(e, prefix) {
			out = append(out, candidate{word: lead + e})
		}
	}
	return out
}

// firstSentence is help up to its first sentence's end, for a completion menu.
func firstSentence(help string) string {
	help = strings.Join(strings.Fields(help), " ")
	if i := strings.Index(help, ". "); i >= 0 {
		help = help[:i]
	}
	return strings.TrimSuffix(help, ".")
}

// bashCompletion completes buddi in bash; filenames when buddi offers nothing.
const bashCompletion = `# bash completion for buddi. Load it with: source <(buddi completion bash)
# or save it as ~/.local/share/bash-completion/completions/buddi.
_buddi() {
    local IFS=$'\n'
    local words=("${COMP_WORDS[@]:1:COMP_CWORD}")
    COMPREPLY=($(command buddi __complete "${words[@]}" 2>/dev/null | cut -f1))
}
complete -o default -F _buddi buddi
`

// zshCompletion completes buddi in zsh, with each word's description; files when buddi
// offers nothing.
const zshCompletion = `#compdef buddi
# zsh completion for buddi. Load it with: source <(buddi completion zsh)
# or save it as _buddi in a directory of $fpath.
_buddi() {
    local -a cands
    local line word desc
    for line in "${(@f)$(command buddi __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}"; do
        [[ -n $line ]] || continue
        word=${line%%$'\t'*}
        desc=${line#*$'\t'}
        [[ $desc == $line ]] && desc=
        cands+=("${word//:/\\:}${desc:+:$desc}")
    done
    if (( ${#cands} )); then
        _describe -t buddi 'buddi' cands
    else
        _files
    fi
}
if [[ $funcstack[1] == _buddi ]]; then
    _buddi "$@"
else
    compdef _buddi buddi
fi
`

// fishCompletion completes buddi in fish, with each word's description; paths when buddi
// offers nothing.
const fishCompletion = `# fish completion for buddi. Load it with: buddi completion fish | source
# or save it as ~/.config/fish/completions/buddi.fish.
function __buddi_complete
    set -l words (commandline -opc)
    set -e words[1]
    set -l cur (commandline -ct)
    set -l out (command buddi __complete $words "$cur" 2>/dev/null)
    if test (count $out) -gt 0
        printf '%s\n' $out
    else
        __fish_complete_path "$cur"
    end
end
complete -c buddi -f -a '(__buddi_complete)'
`
