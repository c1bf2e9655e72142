package channel

// Builder fills one shard's channels of a kind during a build: what the
// build drives. A build calls Add and AddDoc from one goroutine, in row
// order. A kind makes one of its Rows (BuilderOf).
type Builder interface {
	// Preparer returns what one worker of the build turns texts into
	// Add's input with (each worker has its own); nil when the kind reads
	// no text.
	Preparer() Preparer
	// Add adds a chunk as the next row of window w's channel (the next row
	// of its chunk table): prep is what the Preparer made of its text (the
	// zero Prepared without one), vec its vector (nil in a build without a
	// model).
	Add(w int, prep Prepared, vec []float32) error
	// AddDoc adds the next document, with what the Preparer made of its
	// whole text.
	AddDoc(prep Prepared) error
	// Finish ends the build and hands what was made to a searchable
	// Shard over src's rows (src.Read is nil).
	Finish(src *Source) (Shard, error)
	// Close frees what the Builder holds unless Finish handed it on; it is
	// safe to call twice.
	Close() error
}

// Preparer turns a text into what a Builder's Add takes. It is used by one
// goroutine.
type Preparer interface {
	Prepare(text string) Prepared
}

// Prepared is what a kind made of a text (its terms, say) on a worker of
// the build, handed back unopened to the kind's Add: only BuilderOf makes
// and opens one, of the kind's own type.
type Prepared struct{ v any }

// Rows is a kind's builder of its channels' rows, typed by what it makes
// of a text (T: its terms, say; struct{} for a kind that reads no text).
// BuilderOf makes the Builder a build drives of it.
type Rows[T any] interface {
	// Prepare returns a worker's own function from a text to what Add
	// takes; nil when the kind reads no text (Add is then given T's zero
	// value).
	Prepare() func(text string) T
	// Add adds a chunk as the next row of window w's channel, with what
	// Prepare made of its text and its vector (nil without a model).
	Add(w int, t T, vec []float32) error
	// AddDoc adds the next document, with what Prepare made of its whole
	// text.
	AddDoc(t T) error
	// Finish and Close are the Builder's.
	Finish(src *Source) (Shard, error)
	Close() error
}

// BuilderOf is the Builder a build drives of a kind's rows.
func BuilderOf[T any](r Rows[T]) Builder { return rowsBuilder[T]{r} }

type rowsBuilder[T any] struct{ Rows[T] }

func (b rowsBuilder[T]) Preparer() Preparer {
	if f := b.Prepare(); f != nil {
		return preparer[T](f)
	}
	return nil
}

func (b rowsBuilder[T]) Add(w int, p Prepared, vec []float32) error {
	t, _ := p.v.(T)
	return b.Rows.Add(w, t, vec)
}

func (b rowsBuilder[T]) AddDoc(p Prepared) error {
	t, _ := p.v.(T)
	return b.Rows.AddDoc(t)
}

type preparer[T any] func(string) T

func (f preparer[T]) Prepare(text string) Prepared { return Prepared{f(text)} }
