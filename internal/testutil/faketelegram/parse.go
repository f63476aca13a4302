package faketelegram

import "errors"

// ParseText is what Telegram makes of a message text sent with a
// parse_mode: the text it shows (trimmed) and its entities, or the
// description sendMessage refuses it with ("Bad Request: can't parse
// entities: …", "… message is too long", "… message text is empty"). It
// takes the same path as sendMessage, so code that formats text can be
// held to the fake's rules without a server (in a fuzz test, say).
func ParseText(text, parseMode string) (string, []Entity, error) {
	p := params{values: map[string]string{"text": text, "parse_mode": parseMode}}
	plain, ents, e := formatted(p, "text", "parse_mode", "entities")
	if e == nil {
		e = checkText(plain)
	}
	if e != nil {
		return "", nil, errors.New(e.desc)
	}
	return plain, ents, nil
}
