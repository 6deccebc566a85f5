package cursor

import "github.com/agentvcr/agentvcr/contract"

// Cursor's contract is written against contract's shared machinery (the JSON
// scanner, problems and notes, line reading); these names let it read as it
// did when it lived there.

type (
	Problem      = contract.Problem
	Report       = contract.Report
	Rule         = contract.Rule
	Note         = contract.Note
	Kind         = contract.Kind
	Format       = contract.Format
	Options      = contract.Options
	noteSet      = contract.NoteSet
	syntaxError  = contract.SyntaxError
	DepthTracker = contract.DepthTracker
)

const (
	Invalid = contract.Invalid
	Null    = contract.Null
	Bool    = contract.Bool
	Number  = contract.Number
	String  = contract.String
	Array   = contract.Array
	Object  = contract.Object

	JSON       = contract.JSON
	StreamJSON = contract.StreamJSON
	Text       = contract.Text

	WhereStderr = contract.WhereStderr
	WhereExit   = contract.WhereExit
	ExitUnknown = contract.ExitUnknown

	RuleEventType   = contract.RuleEventType
	RuleExit        = contract.RuleExit
	RuleFailure     = contract.RuleFailure
	RuleFields      = contract.RuleFields
	RuleInitFirst   = contract.RuleInitFirst
	RuleJSONLine    = contract.RuleJSONLine
	RuleLiteral     = contract.RuleLiteral
	RuleNewline     = contract.RuleNewline
	RuleResultLast  = contract.RuleResultLast
	RuleResultText  = contract.RuleResultText
	RuleSessionID   = contract.RuleSessionID
	RuleSingleJSON  = contract.RuleSingleJSON
	RuleTextNoJSON  = contract.RuleTextNoJSON
	RuleToolPairing = contract.RuleToolPairing
	RuleUserPrompt  = contract.RuleUserPrompt

	tooLong     = contract.TooLong
	MaxLine     = contract.MaxLine
	readBufSize = contract.ReadBufSize
)

var (
	scanDocument   = contract.ScanDocument
	scanMembers    = contract.ScanMembers
	skipWS         = contract.SkipWS
	keyIs          = contract.KeyIs
	decodeString   = contract.DecodeString
	stringValue    = contract.StringValue
	walkString     = contract.WalkString
	describeByte   = contract.DescribeByte
	lineCol        = contract.LineCol
	newMembers     = contract.NewMembers
	newElements    = contract.NewElements
	sortProblems   = contract.SortProblems
	eachLine       = contract.EachLine
	getReader      = contract.GetReader
	putReader      = contract.PutReader
	Sniff          = contract.Sniff
	ParseFormat    = contract.ParseFormat
	FormatFromArgv = contract.FormatFromArgv
	SniffBytes     = contract.SniffBytes
)
