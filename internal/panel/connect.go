package panel

// SetConnectProblem records why server's bot is not connected to Discord
// ("" once it is): the panel says so, drawn by REST, which may still work
// when the gateway refuses the bot (an intent turned off, its session
// starts spent).
func (p *Panel) SetConnectProblem(server, problem string) {
	p.cmu.Lock()
	defer p.cmu.Unlock()
	if p.connect == nil {
		p.connect = map[string]string{}
	}
	if problem == "" {
		delete(p.connect, server)
		return
	}
	p.connect[server] = problem
}

// connectProblem is what SetConnectProblem recorded for server.
func (p *Panel) connectProblem(server string) string {
	p.cmu.Lock()
	defer p.cmu.Unlock()
	return p.connect[server]
}
