package dashboard

// metricsRoutes serves Deps.Metrics at /metrics, behind the gate like every route: a scrape
// needs the owner's session or the command line's token (Authorization: Bearer).
func (s *Server) metricsRoutes() {
	if s.deps.Metrics == nil {
		return
	}
	s.handle("GET /metrics", s.deps.Metrics.ServeHTTP)
}
