package panel

import "github.com/ccbridge/ccbridge/internal/config"

// snapshot is what a reload gives the panel; it replaces Config and
// Problem.
type snapshot struct {
	cfg     *config.Config
	problem string
}

// Reconfigure makes the panel draw cfg from its next redraw on, with
// problem under its header ("" for none).
func (p *Panel) Reconfigure(cfg *config.Config, problem string) {
	p.live.Store(&snapshot{cfg: cfg, problem: problem})
}

// Current is the config the panel draws: the last one Reconfigure gave,
// else Config.
func (p *Panel) Current() *config.Config {
	if s := p.live.Load(); s != nil {
		return s.cfg
	}
	return p.Config
}

func (p *Panel) problem() string {
	if s := p.live.Load(); s != nil {
		return s.problem
	}
	return p.Problem
}
