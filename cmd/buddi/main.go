// Command buddi is the owner's command line: it serves buddi and inspects it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/alecthomas/kong"

	"buddi/config"
	"buddi/datadir"
	"buddi/dbsource"
	"buddi/doctor"
	"buddi/internal/timezone"
	"buddi/pgcluster"
	"buddi/version"
)

// cli is the whole command line.
type cli struct {
	LogLevel    string           `name:"log-level" enum:"debug,info,warn,error" default:"info" help:"Least severe log lines to print (${enum})."`
	LogFormat   string           `name:"log-format" enum:"text,json" default:"text" help:"How log lines are printed: text or json (one JSON object a line). buddi serve's log file is always JSON."`
	VersionFlag kong.VersionFlag `name:"version" short:"v" help:"Print the version."`

	Init        initCmd        `cmd:"" help:"Set buddi up: the vault key, a model account, the agents on it, and a first answer."`
	Serve       serveCmd       `cmd:"" help:"Run buddi: its database, queue, actors and the dashboard on 127.0.0.1:4317."`
	DB          dbCmd          `cmd:"" name:"db" help:"Inspect and migrate the database."`
	Service     serviceCmd     `cmd:"" help:"Run buddi as your own background service: install, uninstall, status."`
	Doctor      doctorCmd      `cmd:"" help:"Check the installation and say what to do about each problem."`
	Dashboard   dashboardCmd   `cmd:"" help:"Print the dashboard's address (off loopback: a single-use sign-in link)."`
	Chat        chatCmd        `cmd:"" help:"Talk with an agent in the terminal, through the running buddi."`
	Ask         askCmd         `cmd:"" help:"Ask an agent one thing and print the reply."`
	Approvals   approvalsCmd   `cmd:"" help:"List, show, approve and reject actions that wait for you."`
	Missions    missionsCmd    `cmd:"" help:"Scheduled work: list, add, run now, switch on and off, see occurrences."`
	Reminders   remindersCmd   `cmd:"" help:"The agents' reminders: list them (and the limits), cancel one."`
	Pause       pauseCmd       `cmd:"" help:"Stop all work (jobs, missions, sentinels, sources) until buddi resume."`
	Resume      resumeCmd      `cmd:"" help:"Start all work again after buddi pause (and leave recovery mode after a restore)."`
	Backup      backupCmd      `cmd:"" help:"Back up, verify and restore buddi (never its secrets); switch the daily backup."`
	Recovery    recoveryCmd    `cmd:"" help:"After a restore: the checklist to go through before buddi resume."`
	Sentinels   sentinelsCmd   `cmd:"" help:"The watchers: list them and their findings, switch them, snooze or mute findings."`
	Sources     sourcesCmd     `cmd:"" help:"The plugins' pollers: list them, when each last polled and is next due."`
	Telegram    telegramCmd    `cmd:"" help:"The Telegram surface: set the bot up, pair your phone, list and remove devices."`
	Tailnet     tailnetCmd     `cmd:"" help:"The tailnet: switch it on or off, set the owner's login and an auth key, see the node."`
	Jobs        jobsCmd        `cmd:"" help:"Failed jobs: list them by cause, retry, dismiss; cancel a job."`
	Permissions permissionsCmd `cmd:"" help:"List and revoke standing permissions."`
	Plugins     pluginsCmd     `cmd:"" help:"Installed plugins (MCP servers): list, show, add with its whole contribution shown, set a tool's tier, remove."`
	MCP         mcpCmd         `cmd:"" name:"mcp" help:"Serve MCP on stdio for another client, through the running buddi (every write waits for your approval)."`
	Tokens      tokensCmd      `cmd:"" help:"API tokens for buddi's MCP endpoint: create (shown once), list, revoke."`
	Agents      agentsCmd      `cmd:"" help:"List and show the agents; give one an account and model."`
	Accounts    accountsCmd    `cmd:"" help:"Named provider accounts (their secrets stay in the vault)."`
	Vault       vaultCmd       `cmd:"" help:"Store, check and remove secrets; values are never printed."`
	Developer   developerCmd   `cmd:"" help:"The developer agent's workspace tools."`
	Web         webCmd         `cmd:"" help:"Read a web page as text through the address guard, as an agent's web.read does."`
	Email       emailCmd       `cmd:"" help:"Email accounts: add one (its app password into the vault), list them, test one's IMAP login."`
	Bench       benchCmd       `cmd:"" help:"Measure buddi's start-up, idle memory and idle transactions."`
	Logs        logsCmd        `cmd:"" help:"Print buddi serve's log (the file in $BUDDI_HOME/logs); -f follows it, --since 10m shows only the last 10 minutes."`
	Version     versionCmd     `cmd:"" help:"Print the version."`
	Completion  completionCmd  `cmd:"" help:"Print a shell completion script: bash, zsh or fish."`
	Help        helpCmd        `cmd:"" help:"Show every command, grouped, or one command's flags and subcommands."`
	Complete    completeCmd    `cmd:"" name:"__complete" hidden:"" passthrough:"" help:"The completion scripts' helper."`
}

// runEnv is what every command's Run receives.
type runEnv struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	log    *slog.Logger
}

// exitError carries an exit code up to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return printSummary(stdout)
	}
	var c cli
	exit := -1
	parser, err := kong.New(&c,
		kong.Name("buddi"),
		kong.Description("buddi "+version.Version+": a personal agent platform that runs on your own machine."),
		kong.UsageOnError(),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exit = code }),
		kong.Vars{"version": "buddi " + version.Version},
		kong.ConfigureHelp(helpOptions),
		kong.PostBuild(groupCommands),
	)
	if err != nil {
		fmt.Fprintln(stderr, "buddi:", err)
		return doctor.ExitUsage
	}
	kctx, err := parser.Parse(args)
	if exit >= 0 { // --help and friends
		return exit
	}
	if err != nil {
		return usageError(parser, err, stderr)
	}
	env := &runEnv{stdout: stdout, stderr: stderr, log: newFormatLogger(stderr, c.LogLevel, c.LogFormat)}
	ctx, stop := signalContext()
	defer stop()
	env.ctx = ctx
	if err := kctx.Run(env); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.err != nil {
				sayError(stderr, ee.err)
			}
			return ee.code
		}
		sayError(stderr, err)
		return exitCodeOf(err)
	}
	return doctor.ExitOK
}

// sayError prints err as the command's one sentence, after "buddi: " unless the sentence
// already begins with buddi's name ("buddi is not running: …").
func sayError(w io.Writer, err error) {
	msg := err.Error()
	if strings.HasPrefix(msg, "buddi ") {
		fmt.Fprintln(w, msg)
		return
	}
	fmt.Fprintln(w, "buddi:", msg)
}

// exitCodeOf maps an error to the CLI's exit codes: 3 when something must be done first,
// 1 otherwise.
func exitCodeOf(err error) int {
	switch {
	case errors.Is(err, dbsource.ErrNotInitialised), errors.Is(err, pgcluster.ErrNoBinaries), errors.Is(err, datadir.ErrLocked):
		return doctor.ExitDoFirst
	default:
		return doctor.ExitProblem
	}
}

func newLogger(w io.Writer, level string) *slog.Logger {
	return newFormatLogger(w, level, "text")
}

// newFormatLogger logs at level and above, as text or as JSON lines (--log-format).
func newFormatLogger(w io.Writer, level, format string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func loadConfig() (config.Config, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return cfg, &exitError{code: doctor.ExitUsage, err: err}
	}
	timezone.UseHome(cfg.Home)
	return cfg, nil
}

type versionCmd struct {
	JSON bool `name:"json" help:"Print JSON: {\"version\"}."`
}

func (c versionCmd) Run(env *runEnv) error {
	return report(env, c.JSON, map[string]string{"version": version.Version}, "buddi %s", version.Version)
}
