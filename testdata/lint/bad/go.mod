module lintbad

go 1.26
