module github.com/agentvcr/agentvcr

go 1.26
