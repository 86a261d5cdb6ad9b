package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"buddi/agents"
	"buddi/app"
	"buddi/core/vault"
	"buddi/datadir"
	"buddi/dbsource"
	"buddi/internal/timezone"
	"buddi/runtime/account"
	"buddi/runtime/provider"
	"buddi/runtime/transport"
)

// initCmd sets buddi up in one step: the vault key, a model account and its key, the shipped
// agents assigned to it, and a first answer from the model.
type initCmd struct {
	Provider string `enum:"anthropic,openai,openai-compatible," default:"" help:"The model provider: anthropic, openai, or openai-compatible (any Chat Completions server, such as a local Ollama or vLLM). Asked on a terminal when not given."`
	BaseURL  string `name:"base-url" help:"The provider's endpoint, when not its default (required for openai-compatible, e.g. http://127.0.0.1:11434/v1)."`
	Model    string `help:"The model the agents run on (default: claude-sonnet-4-5 for anthropic, gpt-5 for openai)."`
	Account  string `help:"The account's name (default: the provider's, or local for openai-compatible)."`
	KeyStdin bool   `name:"key-stdin" help:"Read the API key from standard input instead of asking for it on the terminal."`
	Yes      bool   `short:"y" help:"Take the default for every choice not given as a flag; ask nothing but the key."`
	Force    bool   `help:"Set up again on a home that is set up: store the new key and assign the agents again."`
	TZ       string `name:"tz" help:"Your IANA time zone, like Europe/Berlin, saved for missions and reminders. Default: the one this machine names (TZ, /etc/localtime, /etc/timezone)."`
	Serve    bool   `help:"Start buddi serve in the background when it is not running (its log goes to serve.log in the home), then ask the default agent for a first answer through it."`
}

// providerChoice is what init knows of a provider.
type providerChoice struct {
	name     string        // the --provider value
	label    string        // shown in the menu
	wire     provider.Wire // the wire the account speaks
	account  string        // the default account name
	model    string        // the default model, or "" when it must be given
	needsURL bool          // a base URL must be given
	needsKey bool          // the server requires a key
}

var providerChoices = []providerChoice{
	{name: "anthropic", label: "Anthropic (Claude)", wire: provider.WireAnthropic, account: "anthropic", model: "claude-sonnet-4-5", needsKey: true},
	{name: "openai", label: "OpenAI", wire: provider.WireOpenAI, account: "openai", model: "gpt-5", needsKey: true},
	{name: "openai-compatible", label: "Another OpenAI-compatible server (Ollama, vLLM, …)", wire: provider.WireOpenAI, account: "local", needsURL: true},
}

// defaultCompatibleURL is offered for an OpenAI-compatible server: a local Ollama.
const defaultCompatibleURL = "http://127.0.0.1:11434/v1"

// noKeyValue is stored for an OpenAI-compatible server that needs no key (the vault holds
// no empty values; such a server ignores the header).
const noKeyValue = "no-key"

// initIO is the terminal init talks through.
type initIO struct {
	in          *bufio.Reader
	inFile      *os.File
	interactive bool // standard input is a terminal and the owner may be asked
	out         io.Writer
}

// ask prints question (with def, if any) and reads one line; an empty answer is def.
func (t *initIO) ask(question, def string) (string, error) {
	if def != "" {
		fmt.Fprintf(t.out, "%s [%s]: ", question, def)
	} else {
		fmt.Fprintf(t.out, "%s: ", question)
	}
	line, err := t.in.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		return "", fmt.Errorf("read the answer to %q: %w", question, err)
	}
	if line = strings.TrimSpace(line); line == "" {
		return def, nil
	}
	return line, nil
}

// secret reads the API key without echo.
func (t *initIO) secret(question string) (string, error) {
	raw, err := readHidden(int(t.inFile.Fd()), t.out, question+" (not shown): ")
	if err != nil {
		return "", fmt.Errorf("read the key from the terminal: %w", err)
	}
	return strings.TrimSpace(string(raw)), nil
}

// readHidden asks prompt on out and reads a line from the terminal fd without echo. Echo is
// off before the prompt shows, so an answer typed or pasted the moment it appears is not
// echoed either; the terminal is put back as it was.
func readHidden(fd int, out io.Writer, prompt string) ([]byte, error) {
	if old, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
		quiet := *old
		quiet.Lflag &^= unix.ECHO
		if unix.IoctlSetTermios(fd, unix.TCSETS, &quiet) == nil {
			defer unix.IoctlSetTermios(fd, unix.TCSETS, old)
		}
	}
	fmt.Fprint(out, prompt)
	raw, err := term.ReadPassword(fd)
	fmt.Fprintln(out)
	return raw, err
}

func (c initCmd) Run(env *runEnv) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	if err := datadir.PrepareHome(cfg.Home); err != nil {
		return err
	}
	tio := &initIO{in: bufio.NewReader(os.Stdin), inFile: os.Stdin, out: env.stdout}
	tio.interactive = !c.KeyStdin && term.IsTerminal(int(os.Stdin.Fd()))
	if err := c.precheck(tio); err != nil {
		return err
	}
	out := env.stdout
	fmt.Fprintf(out, "Setting buddi up in %s\n", cfg.Home)

	// 1. The vault key: found, or made and kept where every buddi finds it.
	keyOpts, err := vault.OwnerKeyOptions(os.Getenv)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	serving := serverRunning(cfg.Home)
	key, created, err := ensureVaultKey(vaultPath(cfg.Home), keyOpts)
	if err != nil {
		return &exitError{code: 3, err: err}
	}
	switch {
	case created:
		fmt.Fprintf(out, "vault key: created, kept in %s (nothing to export; keep a copy somewhere safe)\n", key.Where)
	case key.Source == vault.KeyNowhere:
		fmt.Fprintln(out, "vault: the OS keychain holds the secrets")
	default:
		fmt.Fprintf(out, "vault key: found in %s\n", key.Where)
	}
	if key.Keychain != "" && key.Source == vault.KeyFromFile {
		fmt.Fprintf(out, "  (not in the OS keychain: %s)\n", key.Keychain)
	}
	v, _, err := vault.OpenOwner(vaultPath(cfg.Home), os.Getenv)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if err := v.Check(); err != nil {
		return vaultExit(err)
	}

	// 2. The database, made and migrated as buddi db migrate does.
	// Only warnings reach the owner's terminal: the migrations' progress is not theirs.
	quiet := newLogger(env.stderr, "warn")
	src, err := dbsource.Open(env.ctx, cfg, dbsource.Options{CreateIfMissing: true, Log: quiet})
	if err != nil {
		return err
	}
	defer closeSource(src)
	if _, err := src.Migrate(env.ctx, quiet, app.Schemas(app.Manifests(nil, cfg.Home, nil))...); err != nil {
		return err
	}
	sealKey, err := loadSeal()
	if err != nil {
		return err
	}
	store := account.NewStore(src.Pool, sealKey)
	cat, err := loadCatalog()
	if err != nil {
		return err
	}
	shipped := shippedAgents(cat)

	// 3. A home that is set up stays as it is unless --force.
	if !c.Force {
		if lines, done, err := setUpAlready(env.ctx, store, shipped); err != nil {
			return err
		} else if done {
			fmt.Fprintln(out, "buddi is set up already:")
			for _, l := range lines {
				fmt.Fprintln(out, "  "+l)
			}
			fmt.Fprintln(out, "Nothing changed. Check it with `buddi agents test @buddi`; run `buddi init --force` to set it up again.")
			if err := c.saveZone(out, cfg.Home); err != nil {
				return err
			}
			return nil
		}
	}

	// 4. The provider, its endpoint and model, and its key.
	choice, err := c.pickProvider(tio)
	if err != nil {
		return err
	}
	baseURL, model, name, err := c.details(tio, choice)
	if err != nil {
		return err
	}
	a := account.Account{Name: name, Wire: choice.wire, Kind: provider.CredentialAPIKey, BaseURL: baseURL, SecretName: secretNameFor(name)}
	if err := a.Validate(); err != nil {
		return accountExit(err)
	}
	apiKey, err := c.readKey(tio, choice)
	if err != nil {
		return err
	}
	if err := v.Set(a.SecretName, apiKey); err != nil {
		return vaultExit(err)
	}
	fmt.Fprintf(out, "key: stored in the vault as %s (%s)\n", a.SecretName, v)

	// 5. The account, as buddi accounts add makes it; the shipped agents on it, as buddi
	// agents set assigns them.
	a, err = addOrReuse(env.ctx, store, a)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "account: %s (%s%s)\n", a.Name, a.Wire, urlNote(a.BaseURL))
	var probeAgent agents.Agent
	for _, ag := range shipped {
		as, err := store.Assign(env.ctx, ag.ID, a.Name, model)
		if err != nil {
			return accountExit(err)
		}
		fmt.Fprintf(out, "agent: %s runs on %s with %s\n", ag.Handle, as.Account, as.Model)
		if ag.Default || probeAgent.ID == "" {
			probeAgent = ag
		}
	}

	// 6. A first answer.
	p, err := account.New(a, apiKey, transport.Config{})
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	sentence, ok := account.Probe(env.ctx, p, model)
	fmt.Fprintf(out, "%s: %s\n", probeAgent.Handle, sentence)
	if err := c.saveZone(out, cfg.Home); err != nil {
		return err
	}
	if !ok {
		return &exitError{code: 1, err: fmt.Errorf("the model did not answer, so buddi is saved but not working yet: fix what the line above says, then run `buddi init --force`")}
	}

	// 7. The running buddi (started now with --serve) answers as the agent.
	if !serving && c.Serve {
		if err := startServeInBackground(env.ctx, cfg, out); err != nil {
			return err
		}
		serving = true
	}
	if !serving {
		fmt.Fprintln(out, "Next: `buddi serve` (or `buddi init --serve` next time), then `buddi chat` or `buddi dashboard`.")
		return nil
	}
	if err := firstAnswer(env.ctx, cfg, probeAgent, out, env.stderr); err != nil {
		return err
	}
	fmt.Fprintln(out, "Next: `buddi chat`, or `buddi dashboard` for the dashboard's address.")
	return nil
}

// saveZone saves the owner's time zone in the home: --tz, else the one saved already (kept
// unless --force), else the one this machine names. It says which, and from where.
func (c initCmd) saveZone(out io.Writer, home string) error {
	z := timezone.Owner(home)
	switch {
	case c.TZ != "":
		if err := timezone.Save(home, c.TZ); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("%w (give --tz a name from the zone database, like Europe/Berlin)", err)}
		}
		fmt.Fprintf(out, "time zone: %s (from --tz), saved\n", c.TZ)
		return nil
	case z.Source == timezone.FromSaved && !c.Force:
		fmt.Fprintf(out, "time zone: %s (saved already; give --tz to change it)\n", z.Name)
		return nil
	}
	if z.Source == timezone.FromSaved {
		z = timezone.Detect()
	}
	if err := timezone.Save(home, z.Name); err != nil {
		return err
	}
	if z.Found() {
		fmt.Fprintf(out, "time zone: %s (from %s), saved; give --tz to change it\n", z.Name, z.Source)
		return nil
	}
	fmt.Fprintf(out, "time zone: %s, saved; %s\n", z.Name, z.Note)
	return nil
}

// ensureVaultKey returns the vault key ResolveKey finds, or makes one when there is none and
// no vault needs one. The OS keychain's own vault, already holding secrets, is kept as it
// is (Source KeyNowhere, created false).
func ensureVaultKey(path string, o vault.KeyOptions) (vault.Key, bool, error) {
	key, err := vault.ResolveKey(o)
	if err != nil {
		return key, false, err
	}
	if key.Source != vault.KeyNowhere {
		return key, false, nil
	}
	if _, err := os.Stat(path); err == nil {
		return key, false, fmt.Errorf("the vault %s exists but no key opens it (BUDDI_VAULT_KEY is not set, and neither the OS keychain nor %s holds one): set BUDDI_VAULT_KEY to the key it was sealed with and run `buddi init` again", path, orNoFile(o.File))
	}
	if v, _, err := vault.OpenWithKey(path, o); err == nil && v.Check() == nil {
		if names, err := v.List(); err == nil && len(names) > 0 {
			return key, false, nil
		}
	}
	key, err = vault.CreateKey(o)
	if err != nil {
		return key, false, err
	}
	return key, true, nil
}

func orNoFile(f string) string {
	if f == "" {
		return "a key file"
	}
	return f
}

// serverRunning reports whether a buddi serve holds the home's lock.
func serverRunning(home string) bool {
	lock, err := datadir.TryLock(home)
	if err != nil {
		return errors.Is(err, datadir.ErrLocked)
	}
	lock.Release()
	return false
}

// shippedAgents are the agents that come with buddi, the default first.
func shippedAgents(cat *agents.Catalog) []agents.Agent {
	var out []agents.Agent
	for _, a := range cat.All() {
		if a.Source != agents.SourceExample {
			continue
		}
		if a.Default {
			out = append([]agents.Agent{a}, out...)
		} else {
			out = append(out, a)
		}
	}
	return out
}

// setUpAlready reports whether every shipped agent runs on an enabled account, and says so
// agent by agent.
func setUpAlready(ctx context.Context, store *account.Store, shipped []agents.Agent) ([]string, bool, error) {
	var lines []string
	for _, ag := range shipped {
		as, found, err := store.Assigned(ctx, ag.ID)
		if err != nil {
			return nil, false, err
		}
		if !found {
			return nil, false, nil
		}
		a, err := store.Get(ctx, as.Account)
		if err != nil || !a.Enabled {
			return nil, false, nil
		}
		lines = append(lines, fmt.Sprintf("%s runs on %s with %s", ag.Handle, as.Account, as.Model))
	}
	return lines, len(shipped) > 0, nil
}

// precheck refuses, before anything is made, a scripted init whose flags cannot be
// enough: nobody will be asked for what is missing.
func (c initCmd) precheck(t *initIO) error {
	if c.TZ != "" {
		if _, err := timezone.Load(c.TZ); err != nil || strings.HasPrefix(c.TZ, "/") {
			return &exitError{code: 2, err: fmt.Errorf("--tz %q is not a time zone: give one from the zone database, like Europe/Berlin", c.TZ)}
		}
	}
	if t.interactive && !c.Yes {
		return nil
	}
	if c.Provider == "" {
		return &exitError{code: 2, err: errors.New("no provider: give --provider anthropic, openai or openai-compatible (or run `buddi init` on a terminal to be asked)")}
	}
	if c.Provider == "openai-compatible" && c.BaseURL == "" {
		return &exitError{code: 2, err: fmt.Errorf("an OpenAI-compatible server needs its address: give --base-url (a local Ollama is %s)", defaultCompatibleURL)}
	}
	if c.Provider == "openai-compatible" && c.Model == "" {
		return &exitError{code: 2, err: errors.New("no model: give --model with the model's name on that server (for Ollama, one `ollama list` shows)")}
	}
	if !c.KeyStdin && !term.IsTerminal(int(t.inFile.Fd())) {
		return &exitError{code: 2, err: errors.New("no terminal to ask for the API key on: pipe it in and give --key-stdin, e.g. `printf %s \"$KEY\" | buddi init --provider anthropic --key-stdin`")}
	}
	return nil
}

// pickProvider takes --provider, or asks on a terminal.
func (c initCmd) pickProvider(t *initIO) (providerChoice, error) {
	if c.Provider != "" {
		for _, p := range providerChoices {
			if p.name == c.Provider {
				return p, nil
			}
		}
	}
	if !t.interactive || c.Yes {
		return providerChoice{}, &exitError{code: 2, err: errors.New("no provider: give --provider anthropic, openai or openai-compatible (or run `buddi init` on a terminal to be asked)")}
	}
	fmt.Fprintln(t.out, "Which model provider?")
	for i, p := range providerChoices {
		fmt.Fprintf(t.out, "  %d. %s\n", i+1, p.label)
	}
	for {
		answer, err := t.ask("Provider", "1")
		if err != nil {
			return providerChoice{}, err
		}
		for i, p := range providerChoices {
			if answer == fmt.Sprint(i+1) || strings.EqualFold(answer, p.name) {
				return p, nil
			}
		}
		fmt.Fprintf(t.out, "%q is not one of them: answer 1, 2 or 3.\n", answer)
	}
}

// details settles the base URL, the model and the account name, from the flags, asking on a
// terminal for what is missing (unless --yes takes the defaults).
func (c initCmd) details(t *initIO, p providerChoice) (baseURL, model, name string, err error) {
	ask := t.interactive && !c.Yes
	baseURL, model, name = c.BaseURL, c.Model, c.Account
	if baseURL == "" && p.needsURL {
		if !ask {
			return "", "", "", &exitError{code: 2, err: fmt.Errorf("an OpenAI-compatible server needs its address: give --base-url (a local Ollama is %s)", defaultCompatibleURL)}
		}
		if baseURL, err = t.ask("The server's base URL", defaultCompatibleURL); err != nil {
			return "", "", "", err
		}
	}
	if model == "" {
		switch {
		case ask:
			if model, err = t.ask("Model", p.model); err != nil {
				return "", "", "", err
			}
		case p.model != "":
			model = p.model
		}
		if model == "" {
			return "", "", "", &exitError{code: 2, err: errors.New("no model: give --model with the model's name on that server (for Ollama, one `ollama list` shows)")}
		}
	}
	if name == "" {
		name = p.account
	}
	return baseURL, model, name, nil
}

// readKey reads the API key: from standard input with --key-stdin, else without echo on the
// terminal.
func (c initCmd) readKey(t *initIO, p providerChoice) (string, error) {
	var key string
	switch {
	case c.KeyStdin:
		raw, err := io.ReadAll(io.LimitReader(os.Stdin, vault.MaxValueLen+2))
		if err != nil {
			return "", fmt.Errorf("read the API key from standard input: %w", err)
		}
		key = strings.TrimSpace(string(raw))
	case term.IsTerminal(int(t.inFile.Fd())):
		prompt := "API key"
		if !p.needsKey {
			prompt = "API key (leave empty if the server needs none)"
		}
		var err error
		if key, err = t.secret(prompt); err != nil {
			return "", err
		}
	default:
		return "", &exitError{code: 2, err: errors.New("no terminal to ask for the API key on: pipe it in and give --key-stdin, e.g. `printf %s \"$KEY\" | buddi init --provider anthropic --key-stdin`")}
	}
	if key == "" {
		if p.needsKey {
			return "", &exitError{code: 2, err: fmt.Errorf("no API key was given: %s needs one (create it in the provider's console), then run `buddi init` again", p.label)}
		}
		key = noKeyValue
	}
	return key, nil
}

// secretNameFor is the vault entry for an account's key: ANTHROPIC_API_KEY for anthropic.
func secretNameFor(accountName string) string {
	return strings.ToUpper(strings.ReplaceAll(accountName, "-", "_")) + "_API_KEY"
}

// addOrReuse adds the account, or keeps one of that name that says the same.
func addOrReuse(ctx context.Context, store *account.Store, a account.Account) (account.Account, error) {
	added, err := store.Add(ctx, a)
	if err == nil {
		return added, nil
	}
	if !errors.Is(err, account.ErrExists) {
		return a, accountExit(err)
	}
	old, gerr := store.Get(ctx, a.Name)
	if gerr != nil {
		return a, accountExit(gerr)
	}
	if old.Wire != a.Wire || old.Kind != a.Kind || old.BaseURL != a.BaseURL || old.SecretName != a.SecretName {
		return a, &exitError{code: 1, err: fmt.Errorf("an account named %s exists with other settings: give init another name with --account NAME (or remove it with `buddi accounts remove %s`)", a.Name, a.Name)}
	}
	if !old.Enabled {
		if err := store.SetEnabled(ctx, a.Name, true); err != nil {
			return a, accountExit(err)
		}
		old.Enabled = true
	}
	return old, nil
}

func urlNote(u string) string {
	if u == "" {
		return ""
	}
	return ", " + u
}
