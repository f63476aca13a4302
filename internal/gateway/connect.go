package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"
)

// StartReserve is how many of a bot's daily gateway session starts Open
// leaves unspent. Discord allows 1000 IDENTIFYs a day per bot, shared by
// every machine that runs it; past them it ends all the bot's sessions and
// resets its token. The reserve keeps a crash loop, or a fleet restarting
// together, from ever getting there.
const StartReserve = 25

// StartLimitError is an Open refused because the bot's session starts
// are down to the reserve.
type StartLimitError struct {
	Remaining, Total int
	// ResetAfter is when Discord gives the bot its starts back.
	ResetAfter time.Duration
}

func (e *StartLimitError) Error() string {
	return fmt.Sprintf("Discord allows this bot only %d more gateway connections (of %d a day) before it resets the bot's token; "+
		"ccbridge keeps the last %d and waits until the count resets in %s", e.Remaining, e.Total, StartReserve, e.ResetAfter.Round(time.Second))
}

// checkStarts reads the bot's session_start_limit and refuses to connect
// when what remains is within the reserve.
func checkStarts(ctx context.Context, dg *discordgo.Session) error {
	gb, err := dg.GatewayBot(discordgo.WithContext(ctx))
	if err != nil {
		return err
	}
	l := gb.SessionStartLimit
	if l.Total > 0 && l.Remaining < StartReserve {
		return &StartLimitError{Remaining: l.Remaining, Total: l.Total, ResetAfter: time.Duration(l.ResetAfter) * time.Millisecond}
	}
	return nil
}
