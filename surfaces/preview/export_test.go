package preview

import "time"

// AgeSessions makes every preview session's last confirmation by the database d older, as if
// d had passed.
func (s *Server) AgeSessions(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.sessions {
		e.confirmed = e.confirmed.Add(-d)
	}
}

// SessionQuestions is how many times the database was asked whether a preview session is
// valid.
func (s *Server) SessionQuestions() int64 { return s.questions.Load() }
