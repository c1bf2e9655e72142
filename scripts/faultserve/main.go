// Command faultserve runs a remotetest fake embedding server with one fault,
// for measuring what msrag does against it (scripts/hostile-server-memory.sh):
//
//	go run ./scripts/faultserve -fault huge-body -after 1 -bytes 268435456
//
// It prints the base URL on standard output and serves until killed.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/msrag/msrag/remote/remotetest"
)

func main() {
	name := flag.String("fault", "none", "fault: none, zero-vectors, nan, wrong-count, changing-dims, huge-body, huge-error, slow-headers, slow-body, reset-mid-body, status")
	after := flag.Int("after", 1, "requests answered correctly before the fault")
	size := flag.Int64("bytes", 256<<20, "body size of huge-body and huge-error")
	dims := flag.Int("dims", 384, "vector size")
	status := flag.Int("status", 503, "HTTP status of the status fault (huge-error: 500)")
	message := flag.String("message", "down for maintenance", "error message of the status fault")
	flag.Parse()
	kind := remotetest.FaultKind(-1)
	for k := remotetest.NoFault; k <= remotetest.Status; k++ {
		if k.String() == *name {
			kind = k
		}
	}
	if kind < 0 {
		log.Fatalf("faultserve: unknown fault %q", *name)
	}
	srv := remotetest.NewServer(remotetest.Config{Dims: *dims})
	defer srv.Close()
	f := remotetest.Fault{Kind: kind, After: *after, Bytes: *size, Message: *message}
	if kind == remotetest.Status {
		f.Status = *status
	}
	srv.SetFault(f)
	fmt.Println(srv.URL)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	<-stop
}
