package app

import (
	"fmt"
	"os"

	"buddi/surfaces/dashboard"
	"buddi/surfaces/telegram"
)

// phoneDeps is what Settings → Telegram and Settings → Tailnet read and write through: the
// Telegram surface's store with the seal key, the previews switch, where the tailnet auth key
// is kept (never its value) and the name the node asks for.
func (w *wired) phoneDeps() *dashboard.Phone {
	return &dashboard.Phone{
		Telegram: &telegram.Store{Pool: w.src.Pool, Scrub: w.scrub, Key: w.seal, Log: w.log},
		Previews: w.devStore,
		AuthKey:  w.tailnetAuthKey,
		Hostname: w.cfg.TailnetHostname,
	}
}

// tailnetAuthKey says where the node's auth key comes from at the next start: TS_AUTHKEY in
// the environment wins over the vault's entry; "" when neither holds one.
func (w *wired) tailnetAuthKey() (string, error) {
	if os.Getenv("TS_AUTHKEY") != "" {
		return "the environment (TS_AUTHKEY)", nil
	}
	if w.secrets == nil {
		return "", nil
	}
	names, err := w.secrets.List()
	if err != nil {
		return "", fmt.Errorf("list the vault's entries: %w", err)
	}
	for _, n := range names {
		if n == TailnetAuthKeyName {
			return "the vault", nil
		}
	}
	return "", nil
}
