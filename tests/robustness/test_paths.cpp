// Paths: every option that names a file, given paths that are not plain files
// in existing folders. A file the user had is never lost or replaced by another
// kind of thing; a write is whole or not at all.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/robustness/common_args.hpp"
#include "tests/robustness/harness.hpp"

namespace hetstencil::robustness {
namespace {

const std::string kPrecious = "the user's own file, not to be lost\n";

enum class Kind { Npy, Csv, Png, Profile, Read };

struct Target {
  std::string name;
  Kind kind;
  std::function<Args(const Sandbox&, const std::string& path)> args;
};

Args sweep_args(const Sandbox& box) {
  return {"sweep", "--no-calibrate", "--devices", "cpu", "--cpu-devices", "2", "--threads", "1", "--nx", "8",
          "--iters", "2", "--from", "0.25", "--to", "0.75", "--step", "0.25", "--repeats", "1",
          "--csv", (box.root() / "other.csv").string(), "--plot", (box.root() / "other.png").string()};
}

std::vector<Target> targets() {
  return {
      {"solve --output", Kind::Npy, [](const Sandbox&, const std::string& p) { return with(quick_solve(), "--output", p); }},
      {"sweep --csv", Kind::Csv, [](const Sandbox& b, const std::string& p) { return with(sweep_args(b), "--csv", p); }},
      {"sweep --plot", Kind::Png, [](const Sandbox& b, const std::string& p) { return with(sweep_args(b), "--plot", p); }},
      {"calibrate --profile", Kind::Profile,
       [](const Sandbox&, const std::string& p) {
         return Args{"calibrate", "--nx", "16", "--max-rows", "16", "--budget", "2", "--devices", "cpu",
                     "--cpu-devices", "1", "--threads", "1", "--profile", p};
       }},
      {"solve --plan", Kind::Read, [](const Sandbox&, const std::string& p) { return with(quick_solve(), "--plan", p); }},
      {"plan --profile", Kind::Read,
       [](const Sandbox&, const std::string& p) { return Args{"plan", "--profile", p, "--nx", "64", "--iters", "10"}; }},
  };
}

// Whether `p` holds a whole result of the target's kind.
bool complete(Kind kind, const fs::path& p) {
  switch (kind) {
    case Kind::Npy: return complete_npy(p, 8, 8, 8);
    case Kind::Csv: return complete_text(p);
    case Kind::Png: return complete_png(p);
    case Kind::Profile: return nlohmann::json::parse(read_file(p), nullptr, false).is_object();
    case Kind::Read: return false;
  }
  return false;
}

TEST(RobustPaths, EmptyMissingFolderAndOverlongNames) {
  for (const Target& t : targets()) {
    Sandbox box;
    cli_case(box, "paths", t.args(box, ""), Expect::Refused);
    const fs::path missing = box.path("missing") / "sub" / "file";
    cli_case(box, "paths", t.args(box, missing.string()), Expect::Fails);
    check_kept("paths", t.name + " in a missing folder", !fs::exists(box.path("missing")), "it made the folder");
    cli_case(box, "paths", t.args(box, box.path(std::string(300, 'a')).string()));
    std::string deep = box.root().string();
    while (deep.size() < 5000) deep += "/deep";
    cli_case(box, "paths", t.args(box, deep + "/file"), Expect::Fails);
  }
}

TEST(RobustPaths, ADirectoryStaysADirectory) {
  for (const Target& t : targets()) {
    Sandbox box;
    const fs::path dir = box.path("dir");
    fs::create_directory(dir);
    cli_case(box, "paths", t.args(box, dir.string()), Expect::Fails);
    cli_case(box, "paths", t.args(box, dir.string() + "/"), Expect::Fails);
    check_kept("paths", t.name + " a directory", fs::is_directory(dir) && fs::is_empty(dir), "the directory changed");
  }
}

TEST(RobustPaths, SymlinksStayLinksAndTheirTargetsWholeOrUntouched) {
  for (const Target& t : targets()) {
    Sandbox box;
    const fs::path target = box.write("target.txt", kPrecious);
    const fs::path link = box.path("link");
    fs::create_symlink("target.txt", link);
    const Outcome o = cli_case(box, "paths", t.args(box, link.string()));
    const bool still_link = fs::is_symlink(link) && fs::read_symlink(link) == "target.txt";
    check_kept("paths", t.name + " a symlink to a file", still_link, "the link was replaced");
    const bool target_ok = read_file(target) == kPrecious || (t.kind != Kind::Read && complete(t.kind, target));
    check_kept("paths", t.name + " a symlink to a file", target_ok, "its target is neither untouched nor whole");
    if (t.kind == Kind::Profile || t.kind == Kind::Read) {
      // Not a profile: the file is kept (as it was, or as a .bad copy).
      check_kept("paths", t.name + " a symlink to a file", some_file_holds(box.root(), kPrecious),
                 "the file it named is gone");
    }
    (void)o;

    const fs::path dangling = box.path("dangling");
    fs::create_symlink("nowhere.out", dangling);
    cli_case(box, "paths", t.args(box, dangling.string()));
    check_kept("paths", t.name + " a dangling symlink", fs::is_symlink(dangling), "the link was replaced");
  }
}

TEST(RobustPaths, AFifoIsNeverBlockedOn) {
  for (const Target& t : targets()) {
    Sandbox box;
    const fs::path fifo = box.path("fifo");
    ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0) << std::strerror(errno);
    cli_case(box, "paths", t.args(box, fifo.string()), Expect::Fails, within(10));
    check_kept("paths", t.name + " a FIFO", fs::is_fifo(fifo), "the FIFO was replaced");
  }
}

TEST(RobustPaths, ADeviceNodeStaysADeviceNode) {
  // As root a copy of /dev/null (made here) is the target: the real one is not
  // risked. Without root the real one is, which this user cannot replace anyway.
  for (const Target& t : targets()) {
    Sandbox box;
    fs::path node = "/dev/null";
    if (geteuid() == 0) {
      node = box.path("null");
      if (mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) GTEST_SKIP() << "mknod: " << std::strerror(errno);
    }
    cli_case(box, "paths", t.args(box, node.string()));
    struct stat st {};
    check_kept("paths", t.name + " " + node.string(), stat(node.c_str(), &st) == 0 && S_ISCHR(st.st_mode),
               "it is no longer a character device");
  }
}

TEST(RobustPaths, AReadOnlyFileIsUntouched) {
  // Root may write anywhere; permissions are what an ordinary user meets.
  const bool as_nobody = geteuid() == 0;
  if (as_nobody && !why_not_root().empty()) GTEST_SKIP() << why_not_root();
  for (const Target& t : targets()) {
    Sandbox box;
    const fs::path ro = box.write("read-only.txt", kPrecious);
    box.give_to_nobody();
    fs::permissions(ro, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    RunOptions options;
    options.unprivileged = as_nobody;
    cli_case(box, "paths", t.args(box, ro.string()), t.kind == Kind::Read ? Expect::Fails : Expect::Any, options);
    const auto perms = fs::status(ro).permissions();
    check_kept("paths", t.name + " a read-only file", fs::is_regular_file(fs::symlink_status(ro)) && read_file(ro) == kPrecious &&
                                                         perms == (fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read),
               "it was changed or replaced");
  }
}

TEST(RobustPaths, NewFilesGetTheUsualMode) {
  Sandbox box;
  const fs::path out = box.path("u.npy");
  const mode_t old = umask(022);
  const Outcome o = cli_case(box, "paths", with(quick_solve(), "--output", out.string()), Expect::Success);
  umask(old);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(complete_npy(out, 8, 8, 8));
  EXPECT_EQ(fs::status(out).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
}

}  // namespace
}  // namespace hetstencil::robustness
