package app

import "buddi/surfaces/dashboard"

// watchDeps is what the Reminders and Sentinels and alerts pages read and write through.
func (w *wired) watchDeps() *dashboard.Watch { return &dashboard.Watch{} }
