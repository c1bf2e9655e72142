package tokenizer

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf8"
)

// fileJSON is the top level of tokenizer.json.
type fileJSON struct {
	Truncation    *truncationJSON  `json:"truncation"`
	Padding       *paddingJSON     `json:"padding"`
	AddedTokens   []addedTokenJSON `json:"added_tokens"`
	Normalizer    json.RawMessage  `json:"normalizer"`
	PreTokenizer  json.RawMessage  `json:"pre_tokenizer"`
	Model         json.RawMessage  `json:"model"`
	PostProcessor json.RawMessage  `json:"post_processor"`
}

type truncationJSON struct {
	Direction string `json:"direction"`
	MaxLength int    `json:"max_length"`
	Strategy  string `json:"strategy"`
	Stride    int    `json:"stride"`
}

type paddingJSON struct {
	PadID int32 `json:"pad_id"`
}

type addedTokenJSON struct {
	ID         int32  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// component is any JSON object with a "type".
type component map[string]json.RawMessage

func (c component) typ() string {
	var s string
	_ = json.Unmarshal(c["type"], &s)
	return s
}

// get decodes field k into v; a missing or null field leaves v as it is.
func (c component) get(path, k string, v any) error {
	raw, ok := c[k]
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return invalid(path+"."+k, "%v", err)
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

func parseComponent(path string, raw json.RawMessage) (component, error) {
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, invalid(path, "%v", err)
	}
	return c, nil
}

// patternJSON is {"String": "..."} or {"Regex": "..."}.
type patternJSON struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

func compilePattern(path string, c component) (string, *regexp.Regexp, error) {
	var p patternJSON
	if err := c.get(path, "pattern", &p); err != nil {
		return "", nil, err
	}
	switch {
	case p.String != nil:
		return *p.String, nil, nil
	case p.Regex != nil:
		re, err := regexp.Compile(*p.Regex)
		if err != nil {
			return "", nil, unsupported(path+".pattern", "regular expression %q: %v", *p.Regex, err)
		}
		return "", re, nil
	}
	return "", nil, invalid(path+".pattern", "neither String nor Regex")
}

func buildNormalizer(path string, raw json.RawMessage) (normalizer, error) {
	c, err := parseComponent(path, raw)
	if err != nil {
		return nil, err
	}
	switch t := c.typ(); t {
	case "BertNormalizer":
		b := &bertNormalizer{cleanText: true, chinese: true, lowercase: true}
		var strip *bool
		if err := firstErr(c.get(path, "clean_text", &b.cleanText), c.get(path, "handle_chinese_chars", &b.chinese),
			c.get(path, "lowercase", &b.lowercase), c.get(path, "strip_accents", &strip)); err != nil {
			return nil, err
		}
		b.stripAccents = b.lowercase
		if strip != nil {
			b.stripAccents = *strip
		}
		return b, nil
	case "Lowercase":
		return lowercaseNormalizer{}, nil
	case "StripAccents":
		return stripAccentsNormalizer{}, nil
	case "NFD":
		return decomposeNormalizer{}, nil
	case "NFKD":
		return decomposeNormalizer{compat: true}, nil
	case "NFC":
		return composeNormalizer{}, nil
	case "NFKC":
		return composeNormalizer{compat: true}, nil
	case "Replace":
		lit, re, err := compilePattern(path, c)
		if err != nil {
			return nil, err
		}
		r := &replaceNormalizer{literal: lit, re: re}
		return r, c.get(path, "content", &r.content)
	case "Prepend":
		p := &prependNormalizer{}
		return p, c.get(path, "prepend", &p.prepend)
	case "Strip":
		p := &stripNormalizer{left: true, right: true}
		return p, firstErr(c.get(path, "strip_left", &p.left), c.get(path, "strip_right", &p.right))
	case "Precompiled":
		var b64 string
		if err := c.get(path, "precompiled_charsmap", &b64); err != nil {
			return nil, err
		}
		if b64 == "" {
			return sequenceNormalizer{}, nil
		}
		data, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, invalid(path+".precompiled_charsmap", "%v", err)
		}
		p, err := newPrecompiled(data)
		if err != nil {
			return nil, invalid(path+".precompiled_charsmap", "%v", err)
		}
		return p, nil
	case "Sequence":
		var list []json.RawMessage
		if err := c.get(path, "normalizers", &list); err != nil {
			return nil, err
		}
		var seq sequenceNormalizer
		for i, r := range list {
			n, err := buildNormalizer(fmt.Sprintf("%s.normalizers[%d]", path, i), r)
			if err != nil {
				return nil, err
			}
			seq = append(seq, n)
		}
		return seq, nil
	default:
		return nil, unsupported(path, "type %q", t)
	}
}

func parseBehavior(path string, c component, def behavior) (behavior, error) {
	var s string
	if err := c.get(path, "behavior", &s); err != nil {
		return 0, err
	}
	switch s {
	case "":
		return def, nil
	case "Removed":
		return behRemoved, nil
	case "Isolated":
		return behIsolated, nil
	case "MergedWithPrevious":
		return behMergedWithPrevious, nil
	case "MergedWithNext":
		return behMergedWithNext, nil
	case "Contiguous":
		return behContiguous, nil
	}
	return 0, unsupported(path+".behavior", "behavior %q", s)
}

func buildPreTokenizer(path string, raw json.RawMessage) (preTokenizer, error) {
	c, err := parseComponent(path, raw)
	if err != nil {
		return nil, err
	}
	switch t := c.typ(); t {
	case "BertPreTokenizer":
		return bertPreTokenizer{}, nil
	case "Whitespace":
		return whitespacePreTokenizer{}, nil
	case "WhitespaceSplit":
		return whitespaceSplit{}, nil
	case "Punctuation":
		b, err := parseBehavior(path, c, behIsolated)
		return punctuationPreTokenizer{b}, err
	case "Digits":
		var ind bool
		if err := c.get(path, "individual_digits", &ind); err != nil {
			return nil, err
		}
		return digitsPreTokenizer{ind}, nil
	case "Split":
		lit, re, err := compilePattern(path, c)
		if err != nil {
			return nil, err
		}
		p := &splitPreTokenizer{literal: lit, re: re}
		if p.b, err = parseBehavior(path, c, behRemoved); err != nil {
			return nil, err
		}
		return p, c.get(path, "invert", &p.invert)
	case "Metaspace":
		m := &metaspace{repl: '▁', scheme: prependAlways, split_: true}
		var repl, scheme string
		var addPrefix *bool
		if err := firstErr(c.get(path, "replacement", &repl), c.get(path, "prepend_scheme", &scheme),
			c.get(path, "add_prefix_space", &addPrefix), c.get(path, "split", &m.split_)); err != nil {
			return nil, err
		}
		if repl != "" {
			r, size := utf8.DecodeRuneInString(repl)
			if size != len(repl) {
				return nil, unsupported(path+".replacement", "replacement %q of more than one character", repl)
			}
			m.repl = r
		}
		switch scheme {
		case "always":
		case "first":
			m.scheme = prependFirst
		case "never":
			m.scheme = prependNever
		case "":
			if addPrefix != nil && !*addPrefix {
				m.scheme = prependNever
			}
		default:
			return nil, unsupported(path+".prepend_scheme", "prepend_scheme %q", scheme)
		}
		return m, nil
	case "Sequence":
		var list []json.RawMessage
		if err := c.get(path, "pretokenizers", &list); err != nil {
			return nil, err
		}
		var seq sequencePreTokenizer
		for i, r := range list {
			p, err := buildPreTokenizer(fmt.Sprintf("%s.pretokenizers[%d]", path, i), r)
			if err != nil {
				return nil, err
			}
			seq = append(seq, p)
		}
		return seq, nil
	default:
		return nil, unsupported(path, "type %q", t)
	}
}

// unigramPiece is one [piece, score] pair of a Unigram vocabulary.
type unigramPiece struct {
	piece string
	score float64
}

func (u *unigramPiece) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil {
		return err
	}
	if len(pair) != 2 {
		return fmt.Errorf("vocabulary entry %s is not a [piece, score] pair", b)
	}
	if err := json.Unmarshal(pair[0], &u.piece); err != nil {
		return err
	}
	return json.Unmarshal(pair[1], &u.score)
}

func buildModel(path string, raw json.RawMessage) (model, error) {
	c, err := parseComponent(path, raw)
	if err != nil {
		return nil, err
	}
	t := c.typ()
	if t == "" {
		// Old files omit the model type; WordPiece has continuing_subword_prefix.
		if _, ok := c["continuing_subword_prefix"]; ok {
			t = "WordPiece"
		} else if _, ok := c["unk_id"]; ok {
			t = "Unigram"
		}
	}
	switch t {
	case "WordPiece":
		vocab, err := parseWordPieceVocab(c["vocab"])
		if err != nil {
			vocab = nil // not the common layout: let encoding/json read it
			if err := c.get(path, "vocab", &vocab); err != nil {
				return nil, err
			}
		}
		unk, prefix, maxChars := "[UNK]", "##", 100
		if err := firstErr(c.get(path, "unk_token", &unk),
			c.get(path, "continuing_subword_prefix", &prefix), c.get(path, "max_input_chars_per_word", &maxChars)); err != nil {
			return nil, err
		}
		w, err := newWordPiece(vocab, unk, prefix, maxChars)
		if err != nil {
			return nil, invalid(path, "%v", err)
		}
		return w, nil
	case "Unigram":
		unk := -1
		var unkPtr *int
		var byteFallback bool
		if err := firstErr(c.get(path, "unk_id", &unkPtr), c.get(path, "byte_fallback", &byteFallback)); err != nil {
			return nil, err
		}
		if unkPtr != nil {
			unk = *unkPtr
		}
		pieces, scores, err := parseUnigramVocab(c["vocab"])
		if err != nil {
			var vocab []unigramPiece // not the common layout: let encoding/json read it
			if err := c.get(path, "vocab", &vocab); err != nil {
				return nil, err
			}
			pieces = make([]string, len(vocab))
			scores = make([]float64, len(vocab))
			for i, v := range vocab {
				pieces[i], scores[i] = v.piece, v.score
			}
		}
		u, err := newUnigram(pieces, scores, unk, byteFallback)
		if err != nil {
			return nil, invalid(path, "%v", err)
		}
		return u, nil
	default:
		return nil, unsupported(path, "type %q", t)
	}
}

// specialJSON is the [token, id] pair of BertProcessing and RobertaProcessing.
type specialJSON struct {
	tok string
	id  int32
}

func (s *specialJSON) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil {
		return err
	}
	if len(pair) != 2 {
		return fmt.Errorf("special token %s is not a [token, id] pair", b)
	}
	if err := json.Unmarshal(pair[0], &s.tok); err != nil {
		return err
	}
	return json.Unmarshal(pair[1], &s.id)
}

type templateItemJSON struct {
	SpecialToken *struct {
		ID     string `json:"id"`
		TypeID int32  `json:"type_id"`
	} `json:"SpecialToken"`
	Sequence *struct {
		ID     string `json:"id"`
		TypeID int32  `json:"type_id"`
	} `json:"Sequence"`
}

type templateSpecialJSON struct {
	ID  string  `json:"id"`
	IDs []int32 `json:"ids"`
}

func buildPostProcessor(path string, raw json.RawMessage) (*postProcessor, error) {
	c, err := parseComponent(path, raw)
	if err != nil {
		return nil, err
	}
	switch t := c.typ(); t {
	case "BertProcessing", "RobertaProcessing":
		var cls, sep specialJSON
		if err := firstErr(c.get(path, "cls", &cls), c.get(path, "sep", &sep)); err != nil {
			return nil, err
		}
		p := &postProcessor{single: []templatePiece{
			{special: true, ids: []int32{cls.id}}, {}, {special: true, ids: []int32{sep.id}},
		}}
		if t == "RobertaProcessing" {
			p.trimOffsets, p.addPrefixSpace = true, true
			if err := firstErr(c.get(path, "trim_offsets", &p.trimOffsets), c.get(path, "add_prefix_space", &p.addPrefixSpace)); err != nil {
				return nil, err
			}
		}
		p.finish()
		return p, nil
	case "TemplateProcessing":
		var single []templateItemJSON
		var specials map[string]templateSpecialJSON
		if err := firstErr(c.get(path, "single", &single), c.get(path, "special_tokens", &specials)); err != nil {
			return nil, err
		}
		p := &postProcessor{}
		for i, it := range single {
			switch {
			case it.SpecialToken != nil:
				sp, ok := specials[it.SpecialToken.ID]
				if !ok {
					return nil, invalid(fmt.Sprintf("%s.single[%d]", path, i), "special token %q missing from special_tokens", it.SpecialToken.ID)
				}
				p.single = append(p.single, templatePiece{special: true, ids: sp.IDs, typeID: it.SpecialToken.TypeID})
			case it.Sequence != nil:
				p.single = append(p.single, templatePiece{typeID: it.Sequence.TypeID})
			default:
				return nil, invalid(fmt.Sprintf("%s.single[%d]", path, i), "neither SpecialToken nor Sequence")
			}
		}
		p.finish()
		return p, nil
	case "Sequence":
		var list []json.RawMessage
		if err := c.get(path, "processors", &list); err != nil {
			return nil, err
		}
		// Processors run in order; only one of them may add tokens here
		// (ByteLevel, which only trims offsets, is not supported).
		var out *postProcessor
		for i, r := range list {
			p, err := buildPostProcessor(fmt.Sprintf("%s.processors[%d]", path, i), r)
			if err != nil {
				return nil, err
			}
			if out != nil && p.numAdded() > 0 {
				return nil, unsupported(fmt.Sprintf("%s.processors[%d]", path, i), "second processor adding special tokens")
			}
			if out == nil || p.numAdded() > 0 {
				out = p
			}
		}
		return out, nil
	default:
		return nil, unsupported(path, "type %q", t)
	}
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
