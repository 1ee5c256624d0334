"""What compile threads and forked compile children print never reaches the user's terminal (issue 24)."""

from __future__ import annotations

import os
import sys
import threading

from tiletune.runtime.quiet import COMPILE_THREAD_PREFIX, quiet_child, quiet_threads


def test_compile_threads_are_silenced_and_other_threads_are_not(capsys):
    def work(text):
        print(text)
        sys.stderr.write(text + "\n")

    with quiet_threads():
        t = threading.Thread(target=work, args=("please share the reproducer above",),
                             name=f"{COMPILE_THREAD_PREFIX}_0")
        u = threading.Thread(target=work, args=("a user thread",), name="user")
        t.start(), u.start()
        t.join(), u.join()
        print("the main thread")
    out, err = capsys.readouterr()
    assert "reproducer" not in out and "reproducer" not in err
    assert "a user thread" in out and "a user thread" in err and "the main thread" in out
    # after the block the streams are the ones before it
    print("after")
    assert capsys.readouterr().out == "after\n"


def test_a_forked_child_writes_nothing_to_the_parents_descriptors(capfd):
    pid = os.fork()
    if pid == 0:  # the child: as a compile child starts
        try:
            quiet_child()
            print("ptxas reproducer from the child", flush=True)
            os.write(2, b"MLIR diagnostic from the child\n")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    os.write(1, b"parent\n")
    out, err = capfd.readouterr()
    assert out == "parent\n" and "child" not in err
