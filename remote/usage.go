package remote

import "fmt"

// Usage describes one request of an EmbedWithUsage call.
type Usage struct {
	First, Last int    // positions of the request's first and last text in the call's texts
	Bytes       int    // UTF-8 bytes of its texts
	Endpoint    string // URL that answered, credentials removed
	Attempts    int    // requests sent for it, retries included
	// PromptTokens is the usage.prompt_tokens of the response: the tokens the
	// server says it read for all the request's texts, as its own tokenizer
	// counts them (a prefix it adds and special tokens included); -1 when the
	// server reported none (TEI's /embed never does).
	PromptTokens int64
}

// CheckPromptTokens compares, request by request, the prompt tokens a server
// reported with want, the caller's own token count of each text of the call
// (counted as the server counts: its prefix and special tokens included). It
// returns how many requests it could check (those that reported a count) and
// an error wrapping ErrTokenCount naming the first request whose count
// differs: fewer tokens than want means the server cut some input, more means
// it counts otherwise (another tokenizer, another prefix).
//
// It sees sums per request, not per text: it cannot tell which text of a
// request was cut (send BatchTexts 1 to know), and a cut in one text hidden by
// extra tokens counted in another goes unseen. A server that reports the
// count before truncating, or none at all, cannot be checked this way.
func CheckPromptTokens(usage []Usage, want []int) (int, error) {
	checked := 0
	for _, u := range usage {
		if u.PromptTokens < 0 {
			continue
		}
		if u.First < 0 || u.Last >= len(want) || u.Last < u.First {
			return checked, fmt.Errorf("remote: request of texts %d..%d is outside the %d counts given: %w",
				u.First, u.Last, len(want), ErrTokenCount)
		}
		var sum int64
		for _, n := range want[u.First : u.Last+1] {
			sum += int64(n)
		}
		checked++
		switch {
		case u.PromptTokens < sum:
			return checked, fmt.Errorf("remote: texts %d..%d at %s: the server read %d prompt tokens, the texts have %d: it truncated some input: %w",
				u.First, u.Last, u.Endpoint, u.PromptTokens, sum, ErrTokenCount)
		case u.PromptTokens > sum:
			return checked, fmt.Errorf("remote: texts %d..%d at %s: the server read %d prompt tokens, the texts have %d: it counts otherwise: %w",
				u.First, u.Last, u.Endpoint, u.PromptTokens, sum, ErrTokenCount)
		}
	}
	return checked, nil
}
