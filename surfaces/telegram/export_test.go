package telegram

import "context"

// Persist is persist, for tests that store updates as a poll would and stop before handling
// them.
func (s *Store) Persist(ctx context.Context, us []Update) error { return s.persist(ctx, us) }
