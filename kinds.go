package msrag

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/indexfile"
	"github.com/msrag/msrag/tokenizer"
)

// WindowTokenizer is the tokenizer that cuts the windows of an index
// without a model (Config.Tokenizer): a tokenizer.json, the name it
// was asked for by (a model's name or the file's path, recorded in the
// manifest) and the file's sha256 (the index's identity of it).
type WindowTokenizer struct {
	Name      string
	SHA256    string
	Tokenizer *tokenizer.Tokenizer
}

// LoadWindowTokenizer reads the tokenizer.json at path, hashing it; name is
// what the manifest records of it (a model name, or path itself).
func LoadWindowTokenizer(name, path string) (*WindowTokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("msrag: tokenizer %s: %w", name, err)
	}
	tok, err := tokenizer.FromJSON(data)
	if err != nil {
		return nil, fmt.Errorf("msrag: tokenizer %s (%s): %w", name, path, err)
	}
	sum := sha256.Sum256(data)
	return &WindowTokenizer{Name: name, SHA256: hex.EncodeToString(sum[:]), Tokenizer: tok}, nil
}

// NoModel is the model name an index without a model records
// (indexfile.NoModel), and what msrag index --model takes for it.
const NoModel = indexfile.NoModel

// ErrNoModel is wrapped by the error for what needs a model (a query
// embedding, a channel searched by vector) asked of an index built without
// one (channel.ErrNoModel).
var ErrNoModel = channel.ErrNoModel

// noModelInfo is the model section of an index without a model: the
// tokenizer that cut its windows.
func noModelInfo(t *WindowTokenizer) (ModelInfo, error) {
	access, err := indexfile.MakeParams(map[string]string{"tokenizer": t.Name})
	if err != nil {
		return ModelInfo{}, err
	}
	return ModelInfo{Name: NoModel, TokenizerSHA256: t.SHA256, Origin: indexfile.Origin{Kind: NoModel, Access: access}}, nil
}
