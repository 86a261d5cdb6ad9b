package app

import "buddi/surfaces/dashboard"

// phoneDeps is what Settings → Telegram and Settings → Tailnet read and write through.
func (w *wired) phoneDeps() *dashboard.Phone { return &dashboard.Phone{} }
