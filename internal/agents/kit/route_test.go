package kit

import (
	"slices"
	"testing"
)

func TestEnvHelpers(t *testing.T) {
	env := []string{"A=1", "B=2", "A=3"}
	if v, ok := Getenv(env, "A"); !ok || v != "3" {
		t.Errorf("Getenv A = %q %v, want the last setting", v, ok)
	}
	if got := Setenv(env, "A", "4"); !slices.Equal(got, []string{"B=2", "A=4"}) {
		t.Errorf("Setenv = %q", got)
	}
	if got := SetenvDefault([]string{"A="}, "A", "x"); !slices.Equal(got, []string{"A=x"}) {
		t.Errorf("SetenvDefault of an empty value = %q", got)
	}
	if AnySet([]string{"K="}, "K") {
		t.Error("an empty value counts as set")
	}
}

func TestFlagValue(t *testing.T) {
	argv := []string{"qwen", "--x", "--openai-base-url", "u1", "--", "--openai-base-url=u3"}
	if v, i := FlagValue(argv, "--openai-base-url"); v != "u1" || i != 3 {
		t.Errorf("FlagValue = %q %d (arguments after -- are not flags)", v, i)
	}
	argv = []string{"qwen", "--openai-base-url=u2"}
	v, i := FlagValue(argv, "--openai-base-url")
	if got := SetFlag(argv, i, "--openai-base-url", "b"); v != "u2" || !slices.Equal(got, []string{"qwen", "--openai-base-url=b"}) || argv[1] != "--openai-base-url=u2" {
		t.Errorf("FlagValue %q, SetFlag = %q (argv changed: %q)", v, got, argv)
	}
	if _, i := FlagValue([]string{"x", "--model"}, "--model"); i != -1 {
		t.Error("a flag without its value was found")
	}
}
