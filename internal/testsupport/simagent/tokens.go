package simagent

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Token splitting imitates what a model's tokenizer does to a reply: short
// words with their leading space (" Running"), long words cut into pieces,
// punctuation on its own, CJK text in runs of one to four characters.
// Absolute paths are the exception: they stay whole in one token, so that a
// normaliser can replace the working directory in per-token events too (a
// real tokenizer would cut them anywhere, and no normaliser could). It is
// deterministic, so the same reply always streams as the same events, and it
// always cuts on rune boundaries: a delta is never invalid UTF-8, though it
// may well end mid-word or mid-phrase.

const (
	maxWordRunes   = 6 // longer words are cut into pieces of wordPieceRunes
	wordPieceRunes = 4
)

// widePattern is the cycle of run lengths for CJK text.
var widePattern = [...]int{1, 3, 2, 4, 2}

// thinkingPattern is the cycle of how many tokens one thinking delta carries.
var thinkingPattern = [...]int{4, 3, 5, 2}

type runeClass int

const (
	classOther runeClass = iota
	classSpace
	classNewline
	classWord
	classWide
)

func classify(r rune) runeClass {
	switch {
	case r == '\n' || r == '\r':
		return classNewline
	case r == ' ' || r == '\t':
		return classSpace
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
		return classWide
	case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
		return classWord
	default:
		return classOther
	}
}

// splitTokens cuts s into model-like tokens. Concatenating the tokens gives s
// back exactly.
func splitTokens(s string) []string {
	var out []string
	wide := 0
	for i := 0; i < len(s); {
		start := i
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i == len(s) {
			out = append(out, s[start:])
			break
		}
		if end := pathEnd(s, i); end > i {
			i = end
			out = append(out, s[start:i])
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch classify(r) {
		case classNewline:
			for i < len(s) && (s[i] == '\n' || s[i] == '\r') {
				i++
			}
		case classWord:
			i = endOfWordPiece(s, i)
		case classWide:
			i = advanceRunes(s, i, widePattern[wide%len(widePattern)], classWide)
			wide++
		default:
			// Repeated ASCII punctuation ("**", "```") is one token.
			i += size
			if size == 1 {
				for i < len(s) && s[i] == byte(r) {
					i++
				}
			}
		}
		out = append(out, s[start:i])
	}
	return out
}

// pathEnd returns where the absolute path starting at i ends, or i when
// there is none: a path is "/" and at least one more "/" before the next
// space, less trailing punctuation.
func pathEnd(s string, i int) int {
	if s[i] != '/' {
		return i
	}
	end := i
	for end < len(s) {
		r, size := utf8.DecodeRuneInString(s[end:])
		if unicode.IsSpace(r) {
			break
		}
		end += size
	}
	for end > i {
		r, size := utf8.DecodeLastRuneInString(s[i:end])
		if !strings.ContainsRune(".,;:!?)]}`'\"”’", r) {
			break
		}
		end -= size
	}
	if !strings.Contains(s[i+1:end], "/") {
		return i
	}
	return end
}

// endOfWordPiece returns where the token starting with the word at i ends.
func endOfWordPiece(s string, i int) int {
	end := advanceRunes(s, i, -1, classWord)
	if utf8.RuneCountInString(s[i:end]) <= maxWordRunes {
		return end
	}
	return advanceRunes(s, i, wordPieceRunes, classWord)
}

// advanceRunes moves past at most n runes of class c from i (all of them if
// n < 0) and returns the new offset.
func advanceRunes(s string, i, n int, c runeClass) int {
	for n != 0 && i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if classify(r) != c {
			break
		}
		i += size
		n--
	}
	return i
}

// splitThinking groups the tokens of s into thinking deltas of a few tokens
// each, the way reasoning text arrives ("Vou ler o arquivo soma.ts", " para
// responder em uma").
func splitThinking(s string) []string {
	tokens := splitTokens(s)
	var out []string
	for i, k := 0, 0; i < len(tokens); k++ {
		n := min(thinkingPattern[k%len(thinkingPattern)], len(tokens)-i)
		var chunk string
		for _, t := range tokens[i : i+n] {
			chunk += t
		}
		out = append(out, chunk)
		i += n
	}
	return out
}
