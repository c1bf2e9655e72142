package onnx

import "errors"

// Sentinel errors. Errors returned by this package wrap one of them, so callers can
// test the kind of failure with [errors.Is] while the message names the file, model
// or text concerned.
var (
	// ErrUnknownModel: a model name is neither a directory, a built-in model, nor a
	// fetched model under the cache.
	ErrUnknownModel = errors.New("unknown model")
	// ErrModelFiles: a model directory lacks a file, or a file is unreadable or
	// malformed (msrag-model.json, model.onnx, tokenizer.json).
	ErrModelFiles = errors.New("bad model files")
	// ErrChecksum: a model file's sha256 differs from the one recorded for it.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrRuntime: the ONNX Runtime library could not be loaded or failed.
	ErrRuntime = errors.New("onnx runtime failure")
	// ErrCUDAUnavailable: the CUDA execution provider was asked for and cannot be
	// created (library without the provider, no device, missing CUDA libraries).
	ErrCUDAUnavailable = errors.New("cuda execution provider unavailable")
	// ErrInput: bad input to an embedding call (a sequence longer than the model
	// takes, an unknown role).
	ErrInput = errors.New("bad input")
	// ErrFetch: a model could not be fetched.
	ErrFetch = errors.New("fetch failed")
	// ErrOffline: a model is not in the cache and fetching is off (--offline,
	// $MSRAG_OFFLINE).
	ErrOffline = errors.New("offline")
	// ErrNotFetched: an hf: model has not been fetched (they are fetched only
	// by msrag model fetch).
	ErrNotFetched = errors.New("not fetched")
	// ErrUnreadable: a model is in the cache but its directory or a file of
	// it cannot be read (its permissions, another user's cache): fetching it
	// again would not help.
	ErrUnreadable = errors.New("in the cache but unreadable")
	// ErrNoConverter: an fp16 model must be made and the converter
	// (scripts/setup-fp16.sh's venv in the cache) is not installed.
	ErrNoConverter = errors.New("fp16 converter not installed")
	// ErrPrecision: a model is asked for in another precision (fp16, fp32)
	// than the one the vectors it must match were embedded in.
	ErrPrecision = errors.New("precision mismatch")
	// ErrClosed: the Embedder was used after Close.
	ErrClosed = errors.New("embedder closed")
)
