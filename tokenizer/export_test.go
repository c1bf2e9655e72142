package tokenizer

// SetCuts turns the encoding of long texts in passes (Tokenizer.cuts) on or
// off, so that a test compares the two; Cuts reports it.
func SetCuts(t *Tokenizer, on bool) { t.cuts = on }
func Cuts(t *Tokenizer) bool        { return t.cuts }

// PassBytes is passBytes.
const PassBytes = passBytes
