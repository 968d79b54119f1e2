import { describe, expect, it } from "vitest"
import { patchFiles } from "../src/patch-stats.js"

const patch = `diff --git a/new.txt b/new.txt
new file mode 100644
index 0000000..3b18e51
--- /dev/null
+++ b/new.txt
@@ -0,0 +1,2 @@
+hello
+world
diff --git a/old.txt b/old.txt
deleted file mode 100644
index 3b18e51..0000000
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-gone
diff --git a/src/a.ts b/src/a.ts
index 1111111..2222222 100644
--- a/src/a.ts
+++ b/src/a.ts
@@ -1,3 +1,3 @@
 keep
--- not a header: a removed line that starts with dashes
+++ not a header: an added line that starts with pluses
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..abcdef0
GIT binary patch
literal 4
LcmZQzWMT#Y01f~L

`

describe("patchFiles", () => {
  it("reads each file's status and line counts from the patch text", () => {
    expect(patchFiles(patch)).toEqual([
      { file: "new.txt", status: "added", additions: 2, deletions: 0 },
      { file: "old.txt", status: "deleted", additions: 0, deletions: 1 },
      { file: "src/a.ts", status: "modified", additions: 1, deletions: 1 },
      { file: "logo.png", status: "added", additions: 0, deletions: 0 }
    ])
  })

  it("is empty for an empty patch", () => {
    expect(patchFiles("")).toEqual([])
  })
})
