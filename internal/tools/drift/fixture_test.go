package drift

import "github.com/agentvcr/agentvcr/internal/testsupport/streamfixture"

// The stream fixtures the diff tests use, by their short names.
var (
	replaceLine = streamfixture.ReplaceLine
	deleteLine  = streamfixture.DeleteLine
	insertLine  = streamfixture.InsertLine
	stream      = streamfixture.Stream
)

const thinking = streamfixture.Thinking
