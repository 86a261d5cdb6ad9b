package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"buddi/app"
	"buddi/dbsource"
	"buddi/surfaces/telegram"
)

type telegramCmd struct {
	Setup   telegramSetupCmd   `cmd:"" help:"Store the bot token (read from standard input, checked with getMe) in the vault."`
	Pair    telegramPairCmd    `cmd:"" help:"Print a one-time pairing code (10 minutes) and its t.me link."`
	Devices telegramDevicesCmd `cmd:"" help:"List the paired devices."`
	Unpair  telegramUnpairCmd  `cmd:"" help:"Remove a paired device."`
}

const tokenName = "TELEGRAM_BOT_TOKEN"

type telegramSetupCmd struct {
	JSON bool `name:"json" help:"Print JSON: {\"ok\",\"bot\",\"bot_id\"}."`
}

func (c telegramSetupCmd) Run(env *runEnv) error {
	token, err := readSecret(os.Stdin)
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("%v (the token is read from standard input, never from an argument)", err)}
	}
	ctx, cancel := context.WithTimeout(env.ctx, 30*time.Second)
	defer cancel()
	me, err := app.TelegramAPI(token).GetMe(ctx)
	if telegram.Unauthorized(err) {
		return &exitError{code: 1, err: errors.New("the Telegram bot API refused that token: copy it again from @BotFather")}
	}
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("could not ask Telegram about the token: %v", err)}
	}
	v, err := openVault()
	if err != nil {
		return err
	}
	if err := v.Set(tokenName, token); err != nil {
		return vaultExit(err)
	}
	st, src, err := openTelegram(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	if err := st.SetBot(env.ctx, me.Username, me.ID); err != nil {
		return err
	}
	if _, err := src.Pool.Exec(env.ctx, `DELETE FROM core.system_flags WHERE key = 'telegram_down'`); err != nil {
		return err
	}
	// A new bot has its own update ids: start from its beginning.
	if _, err := src.Pool.Exec(env.ctx, `DELETE FROM core.surface_cursors WHERE surface = 'telegram'`); err != nil {
		return err
	}
	if _, err := src.Pool.Exec(env.ctx, `DELETE FROM core.surface_updates WHERE surface = 'telegram' AND state <> 'pending'`); err != nil {
		return err
	}
	return report(env, c.JSON, acted(map[string]any{"bot": me.Username, "bot_id": me.ID}),
		"The bot @%s is set up; restart buddi serve to connect it, then pair your phone with `buddi telegram pair`.", me.Username)
}

type telegramPairCmd struct {
	JSON bool `help:"Print JSON: {\"code\",\"link\",\"expires_at\"}."`
}

func (c telegramPairCmd) Run(env *runEnv) error {
	st, src, err := openTelegram(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	bot, found, err := st.Bot(env.ctx)
	if err != nil {
		return err
	}
	if !found {
		return &exitError{code: 3, err: fmt.Errorf("no bot is set up: run `buddi telegram setup` first")}
	}
	// A code sent to another bot is a code given away: the link names only the bot buddi
	// recorded and sealed itself.
	if bot.Refused != "" {
		return &exitError{code: 3, err: fmt.Errorf("the bot's record is not one buddi wrote (%s), so no link is made to it: run `buddi telegram setup` again", bot.Refused)}
	}
	code, expires, err := st.NewPairingCode(env.ctx)
	if err != nil {
		return err
	}
	link := fmt.Sprintf("https://t.me/%s?start=%s", bot.Username, code)
	if c.JSON {
		return writeJSON(env, map[string]any{"code": code, "link": link, "expires_at": expires.UTC()})
	}
	fmt.Fprintf(env.stdout, "Open %s on your phone (or send /start %s to @%s) within 10 minutes. The code works once.\n", link, code, bot.Username)
	return nil
}

// openTelegram opens the database and the surface's store, with the seal key.
func openTelegram(env *runEnv) (*telegram.Store, *dbsource.Source, error) {
	key, src, err := openSealed(env)
	if err != nil {
		return nil, nil, err
	}
	return &telegram.Store{Pool: src.Pool, Key: key}, src, nil
}

type telegramDevicesCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c telegramDevicesCmd) Run(env *runEnv) error {
	st, src, err := openTelegram(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	ds, err := st.Devices(env.ctx)
	if err != nil {
		return err
	}
	if ds == nil {
		ds = []telegram.Device{}
	}
	if c.JSON {
		return writeJSON(env, ds)
	}
	if len(ds) == 0 {
		fmt.Fprintln(env.stdout, "No paired devices: pair one with `buddi telegram pair`.")
		return nil
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUSER\tCHAT\tNAME\tPAIRED\tSTATE")
	unsealed := 0
	for _, d := range ds {
		state := "paired"
		if !d.Sealed {
			state, unsealed = "not sealed: pairs no one", unsealed+1
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%s\n", d.ID, d.UserID, d.ChatID, d.Name, d.PairedAt.Local().Format("Jan 2 15:04"), state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if unsealed > 0 {
		fmt.Fprintln(env.stdout, "A device that is not sealed was paired by an earlier buddi or written into the database: unpair it, and pair your phone again with `buddi telegram pair`.")
	}
	return nil
}

type telegramUnpairCmd struct {
	ID   int64 `arg:"" help:"The device's id (buddi telegram devices)."`
	JSON bool  `name:"json" help:"Print JSON: {\"ok\",\"id\"}."`
}

func (c telegramUnpairCmd) Run(env *runEnv) error {
	src, err := openActions(env)
	if err != nil {
		return err
	}
	defer closeSource(src)
	if err := (&telegram.Store{Pool: src.Pool}).Unpair(env.ctx, c.ID); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("%v: `buddi telegram devices` lists them", err)}
	}
	return report(env, c.JSON, acted(map[string]any{"id": c.ID}), "device %d unpaired", c.ID)
}
