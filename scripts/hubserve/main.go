// Command hubserve runs a stand-in for the Hugging Face hub on a loopback port,
// serving the repositories and files of a directory (internal/hubserve says
// how it is laid out and which routes it answers):
//
//	go run ./scripts/hubserve -root DIR [-addr 127.0.0.1:0] [-token TOKEN]
//
// It prints its base URL (for HF_ENDPOINT) on standard output and serves until
// it is interrupted or terminated. scripts/real-user.sh runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/msrag/msrag/internal/hubserve"
)

func main() {
	root := flag.String("root", "", "directory of the repositories (required)")
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	token := flag.String("token", "", "bearer token every request must carry (default: none)")
	flag.Parse()
	if *root == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: hubserve -root DIR [-addr 127.0.0.1:0] [-token TOKEN]")
		os.Exit(2)
	}
	if st, err := os.Stat(*root); err != nil || !st.IsDir() {
		log.Fatalf("hubserve: -root %s is not a directory", *root)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("hubserve: %v", err)
	}
	srv := &http.Server{Handler: hubserve.New(hubserve.Config{Root: *root, Token: *token}), ReadHeaderTimeout: 30 * time.Second}
	fmt.Printf("http://%s\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("hubserve: %v", err)
	}
}
