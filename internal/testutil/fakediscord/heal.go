package fakediscord

// Heal ends the faults injected for method and glob (Fail, RateLimit,
// FailAfterCreate): the calls that match them succeed again.
func (s *Server) Heal(method, glob string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if f.method == method && f.glob == glob {
			f.left = 0
		}
	}
}
