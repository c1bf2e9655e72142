package deps

import (
	_ "github.com/apache/arrow-go/v18/arrow/ipc"
	_ "github.com/apache/arrow-go/v18/parquet/pqarrow"
	_ "github.com/urfave/cli/v2"
	_ "github.com/yalue/onnxruntime_go"
	_ "golang.org/x/sync/errgroup"
	_ "golang.org/x/term"
	_ "golang.org/x/text/unicode/norm"
	_ "gonum.org/v1/plot"
)
