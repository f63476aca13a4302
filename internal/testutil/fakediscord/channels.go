package fakediscord

import "fmt"

// DeleteChannel deletes a guild's text channel as a member with Manage
// Channels does: CHANNEL_DELETE with the channel object, and its threads
// go with it (Discord sends no THREAD_DELETE for them); REST calls on any
// of them then answer 404 10003.
func (s *Server) DeleteChannel(channelID string) {
	s.t.Helper()
	do(s, func() (struct{}, error) {
		c, err := s.channel(channelID)
		if err != nil {
			return struct{}{}, err
		}
		if c.isThread() {
			return struct{}{}, fmt.Errorf("channel %s is a thread: use DeleteThread", channelID)
		}
		for id, t := range s.channels {
			if t.isThread() && t.ParentID == channelID {
				delete(s.channels, id)
			}
		}
		delete(s.channels, channelID)
		s.dispatchGuild(c.GuildID, "CHANNEL_DELETE", c.json())
		s.notify()
		return struct{}{}, nil
	})
}
