package dashboard

// Phone serves Settings → Telegram and Settings → Tailnet.
type Phone struct{}

// phoneRoutes registers the Telegram and Tailnet settings routes when Deps.Phone is set.
func (s *Server) phoneRoutes() {
	if s.deps.Phone == nil {
		return
	}
}
