package standin

import (
	"github.com/agentvcr/agentvcr/internal/engine/index"
)

// missError is index.ErrNoMatch saying which call in its own words.
type missError string

func (e missError) Error() string { return string(e) }
func (e missError) Unwrap() error { return index.ErrNoMatch }
