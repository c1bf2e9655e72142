package main

import (
	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag/tune"
)

// builtinFusion returns the built-in fusion model that the value of flag
// names (tune.ParseBuiltin: in any case, without parameters), or "" when
// it names none (a rule, a fusion model file). search and eval read
// --fusion-model through it alike, and search --fusion too.
func builtinFusion(c *cli.Context, cmd, flag string) (string, error) {
	name, ok, err := tune.ParseBuiltin(c.String(flag))
	switch {
	case err != nil:
		return "", usagef("%s: --%s: %w", cmd, flag, err)
	case !ok:
		return "", nil
	}
	return name, nil
}

// searchBuiltin returns the built-in fusion model a search asks for, by
// --fusion-model or by --fusion, or "".
func searchBuiltin(c *cli.Context) (string, error) {
	if c.String("fusion-model") != "" {
		return builtinFusion(c, "search", "fusion-model")
	}
	return builtinFusion(c, "search", "fusion")
}
