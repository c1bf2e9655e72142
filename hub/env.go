package hub

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// DefaultEndpoint is the hub the client talks to when neither [Options] nor
// the environment name one, as in huggingface_hub (constants.py).
const DefaultEndpoint = "https://huggingface.co"

// Environment variables the client reads when [Options] leave a field empty.
// They mean what they mean to huggingface_hub (constants.py, utils/_auth.py,
// utils/_headers.py), except EnvEndpoint, msrag's own.
const (
	// EnvEndpoint is msrag's own hub address; it wins over $HF_ENDPOINT, so
	// that msrag can be pointed elsewhere than the Python tools beside it.
	EnvEndpoint = "MSRAG_HF_ENDPOINT"
	// EnvHFEndpoint is the hub address huggingface_hub reads.
	EnvHFEndpoint = "HF_ENDPOINT"
	// EnvToken is an access token, sent as "Authorization: Bearer ...". It is
	// never logged and never part of an error.
	EnvToken = "HF_TOKEN"
	// EnvTokenLegacy is the token's older name, read when $HF_TOKEN is empty.
	EnvTokenLegacy = "HUGGING_FACE_HUB_TOKEN"
	// EnvTokenPath names the file that `hf auth login` writes the token to;
	// empty means $HF_HOME/token.
	EnvTokenPath = "HF_TOKEN_PATH"
	// EnvHome is huggingface_hub's own directory; empty means
	// ${XDG_CACHE_HOME:-~/.cache}/huggingface.
	EnvHome = "HF_HOME"
	// EnvNoImplicitToken, when true, sends no token that [Options.Token] did
	// not give (none from the environment or the token file).
	EnvNoImplicitToken = "HF_HUB_DISABLE_IMPLICIT_TOKEN"
	// EnvOffline, when true, refuses every request: what a fetch needs must
	// be present already. $TRANSFORMERS_OFFLINE is read when it is empty.
	EnvOffline = "HF_HUB_OFFLINE"
	// EnvOfflineLegacy is the older name of EnvOffline.
	EnvOfflineLegacy = "TRANSFORMERS_OFFLINE"
)

// envTrue reports a value huggingface_hub reads as true: 1, ON, YES or TRUE
// in any case (constants.py, _is_true).
func envTrue(v string) bool {
	switch strings.ToUpper(v) {
	case "1", "ON", "YES", "TRUE":
		return true
	}
	return false
}

// OfflineEnv reports whether $HF_HUB_OFFLINE (or, when that is empty,
// $TRANSFORMERS_OFFLINE) asks for no request to a hub.
func OfflineEnv() bool {
	v := os.Getenv(EnvOffline)
	if v == "" {
		v = os.Getenv(EnvOfflineLegacy)
	}
	return envTrue(v)
}

// endpoint returns the hub's base URL and where it came from: the option,
// $MSRAG_HF_ENDPOINT, $HF_ENDPOINT or the default, in that order (an empty
// value counts as unset). A value that is not an http(s) base URL is an error
// wrapping [ErrEndpoint] that names where it came from.
func endpoint(option string) (string, error) {
	ep, from := option, "the Endpoint option"
	for _, env := range []string{EnvEndpoint, EnvHFEndpoint} {
		if ep == "" {
			ep, from = os.Getenv(env), "$"+env
		}
	}
	if ep == "" {
		ep, from = DefaultEndpoint, "the default"
	}
	u, err := url.Parse(ep)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("hub: endpoint %q (from %s) is not an http(s) base URL: %w", ep, from, ErrEndpoint)
	}
	return strings.TrimRight(ep, "/"), nil
}

// token returns the token to send: the option, else (unless
// $HF_HUB_DISABLE_IMPLICIT_TOKEN) $HF_TOKEN, $HUGGING_FACE_HUB_TOKEN or the
// token file, each with line breaks removed and spaces trimmed, as
// huggingface_hub's get_token does; "" for none. A token file that exists but
// cannot be read is an error naming it.
func token(option string) (string, error) {
	if option != "" {
		return option, nil
	}
	if envTrue(os.Getenv(EnvNoImplicitToken)) {
		return "", nil
	}
	for _, env := range []string{EnvToken, EnvTokenLegacy} {
		if t := cleanToken(os.Getenv(env)); t != "" {
			return t, nil
		}
	}
	path := TokenPath()
	if path == "" {
		return "", nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("hub: reading the token file %s: %w", path, err)
	}
	return cleanToken(string(data)), nil
}

// cleanToken removes line breaks and surrounding spaces.
func cleanToken(t string) string {
	return strings.TrimSpace(strings.NewReplacer("\r", "", "\n", "").Replace(t))
}

// TokenPath returns the file a token is read from when no option or variable
// gives one: $HF_TOKEN_PATH, else $HF_HOME/token, else
// ${XDG_CACHE_HOME:-~/.cache}/huggingface/token; "" when there is no home.
func TokenPath() string {
	if p := os.Getenv(EnvTokenPath); p != "" {
		return expandHome(p)
	}
	home := os.Getenv(EnvHome)
	if home == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return ""
			}
			base = filepath.Join(h, ".cache")
		}
		home = filepath.Join(base, "huggingface")
	}
	return filepath.Join(expandHome(home), "token")
}

// expandHome replaces a leading "~/" with the user's home directory.
func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, rest)
		}
	}
	return p
}
