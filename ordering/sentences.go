package ordering

import (
	"companydocs"
	"companydocs/messages"
)

// say says the catalog's sentence key (package messages) in English with
// the words paramArgs makes of p: the message of a blocker, a next step
// or a history entry, which a client can say in its own language from
// the same code and params.
func say(key string, p *companydocs.Params) string {
	return companydocs.SayIn(messages.English, key, p)
}

// blocked refuses a strict create with its first blocker, said from the
// catalog in the language the request asks for.
func blocked(code string, b companydocs.Blocker, key string) *companydocs.Error {
	argsIn := func(lang string) messages.Args {
		return messages.Args{"blocker": companydocs.SayIn(lang, "blocker."+b.Code, &b.Params)}
	}
	e := companydocs.Refusal(code, key, argsIn(messages.English))
	e.ArgsIn = argsIn
	return e
}
