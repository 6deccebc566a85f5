// Package contract is what the agents' output contracts share: problems and
// notes with their rules ([Problem], [Rule], [Report]), the events they are
// about ([ParseEvent]) and the output formats ([Format], the cassette's).
// The JSON scanner and line reader they are written on are package
// internal/engine/jsonscan; the event diff and shape drift built on them are
// package internal/tools/drift. Each agent's contract lives with its profile:
// Cursor's in internal/agents/cursor, the others' in package agent.
//
// [Options] and [ExitUnknown] are common to every contract.
package contract
