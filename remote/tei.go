package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// probeTimeout caps the wait for one TEI GET /info.
const probeTimeout = 10 * time.Second

// teiInfo is the part of TEI's GET /info the Client uses.
type teiInfo struct {
	ModelID            string `json:"model_id"`
	MaxInputLength     int    `json:"max_input_length"`
	MaxClientBatchSize int    `json:"max_client_batch_size"`
}

// probe reads TEI's GET /info from every endpoint once, on the first call:
// the model id (which must be the same everywhere, and Options.Model when
// set), max_input_length for messages, and max_client_batch_size, which caps
// the texts per request. An endpoint that does not answer is noted on Log
// and skipped; a cancelled ctx leaves the probe for the next call.
func (c *Client) probe(ctx context.Context) error {
	if c.opts.API != TEI {
		return nil
	}
	c.probeMu.Lock()
	defer c.probeMu.Unlock()
	if c.probed {
		return c.probeErr
	}
	var got *teiInfo
	from := ""
	for i, ep := range c.endpoints {
		in, err := c.getInfo(ctx, ep)
		if ctx.Err() != nil {
			return fmt.Errorf("remote: reading %s: %w", c.shownInfo(i), ctx.Err())
		}
		if err != nil {
			c.logf("GET %s: %v; going on without it", c.shownInfo(i), err)
			continue
		}
		if got != nil && in.ModelID != got.ModelID {
			c.probeErr = fmt.Errorf("remote: %s serves model %q, %s serves %q: %w",
				c.shownInfo(i), in.ModelID, from, got.ModelID, ErrMismatch)
			break
		}
		got, from = in, c.shownInfo(i)
	}
	if c.probeErr == nil && got != nil {
		c.probeErr = c.useInfo(got, from)
	}
	c.probed = true
	return c.probeErr
}

// useInfo records what GET /info said.
func (c *Client) useInfo(in *teiInfo, from string) error {
	if c.opts.Model != "" && in.ModelID != c.opts.Model {
		return fmt.Errorf("remote: %s serves model %q, Options.Model is %q: %w", from, in.ModelID, c.opts.Model, ErrMismatch)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.model, c.modelFrom = in.ModelID, from
	c.maxInput, c.maxBatch = in.MaxInputLength, in.MaxClientBatchSize
	if in.MaxClientBatchSize > 0 && in.MaxClientBatchSize < c.batchCap {
		c.logf("%s takes at most %d texts per request; batching by %d instead of %d",
			from, in.MaxClientBatchSize, in.MaxClientBatchSize, c.batchCap)
		c.batchCap = in.MaxClientBatchSize
	}
	return nil
}

// getInfo fetches and decodes one endpoint's GET /info.
func (c *Client) getInfo(ctx context.Context, ep endpoint) (*teiInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, min(c.opts.Timeout, probeTimeout))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ep.info, nil)
	if err != nil {
		return nil, err
	}
	c.setHeaders(req)
	res, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s", scrub(err.Error(), c.opts.APIKey))
	}
	defer res.Body.Close()
	var body bytes.Buffer
	limit := int64(infoBodyLimit)
	if res.StatusCode != http.StatusOK {
		limit = errorBodyLimit
	}
	over, err := readLimited(&body, res.Body, limit)
	if err != nil {
		return nil, fmt.Errorf("reading the response: %s", scrub(err.Error(), c.opts.APIKey))
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d: %s", res.StatusCode, serverMessage(body.Bytes(), c.opts.APIKey))
	}
	if over {
		return nil, fmt.Errorf("response body over %d bytes", limit)
	}
	var in teiInfo
	if err := json.Unmarshal(body.Bytes(), &in); err != nil {
		return nil, fmt.Errorf("decoding %s: %v", excerpt(body.Bytes()), err)
	}
	return &in, nil
}

// shownInfo returns endpoint i's /info URL without credentials.
func (c *Client) shownInfo(i int) string {
	u := c.endpoints[i].shown
	if n := len(u) - len("/embed"); n >= 0 && u[n:] == "/embed" {
		return u[:n] + "/info"
	}
	return u
}
