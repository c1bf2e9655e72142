package deps
import (
 _ "github.com/apache/arrow-go/v18/parquet/pqarrow"
 _ "github.com/apache/arrow-go/v18/arrow/ipc"
 _ "github.com/yalue/onnxruntime_go"
 _ "github.com/urfave/cli/v2"
 _ "golang.org/x/sync/errgroup"
 _ "golang.org/x/text/unicode/norm"
 _ "golang.org/x/term"
 _ "gonum.org/v1/plot"
)
