"""How kernels are built and run, and nothing of any stage: the dispatch of every compiled kernel
(:mod:`.jit`), the ahead-of-time build and its signatures (:mod:`.aot`, ``signatures.txt``), the one
mixing function (:mod:`.mix`) and the return of freed memory to the system (:mod:`.malloc`)."""
