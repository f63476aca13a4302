package fakediscord

import "time"

// Created is when the message was created (its first post arrived).
func (m *Message) Created() time.Time { return m.created }
