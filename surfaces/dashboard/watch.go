package dashboard

// Watch serves the Reminders and Sentinels and alerts pages.
type Watch struct{}

// watchRoutes registers the Reminders and Sentinels and alerts routes when Deps.Watch is set.
func (s *Server) watchRoutes() {
	if s.deps.Watch == nil {
		return
	}
}
