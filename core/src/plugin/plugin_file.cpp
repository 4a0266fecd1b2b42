#include "plugin/plugin_file.hpp"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "tileops/errors.hpp"

namespace tileops::plugin {
namespace {

namespace fs = std::filesystem;

using Ehdr = ElfW(Ehdr);
using Phdr = ElfW(Phdr);
using Shdr = ElfW(Shdr);
using Sym = ElfW(Sym);

constexpr unsigned char kElfClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
constexpr unsigned char kElfData = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
#if defined(__x86_64__)
constexpr int kElfMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kElfMachine = EM_AARCH64;
#elif defined(__powerpc64__)
constexpr int kElfMachine = EM_PPC64;
#else
constexpr int kElfMachine = -1;  // not checked
#endif

// The dynamic symbol and string tables are read whole; larger ones are not looked into.
constexpr std::uint64_t kMaxSymbolTableBytes = 64ull << 20;

[[noreturn]] void refuse(const std::string& reason) { throw BackendError(reason); }

std::string mode_str(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

std::string bytes_str(std::uint64_t n) { return std::to_string(n) + " bytes"; }

const char* type_name(fs::file_type type) {
  switch (type) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::block: return "a block device";
    case fs::file_type::character: return "a character device";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

// The regular file `path` names, links resolved.
fs::path resolve(const fs::path& path) {
  std::error_code ec;
  const fs::file_status entry = fs::symlink_status(path, ec);
  if (ec) refuse("cannot be examined: " + ec.message());
  fs::path resolved = path;
  if (fs::is_symlink(entry)) {
    resolved = fs::canonical(path, ec);
    if (ec == std::errc::too_many_symbolic_link_levels) {
      refuse("is a symbolic link that loops: resolving it meets too many levels of symbolic links");
    }
    if (ec == std::errc::no_such_file_or_directory) {
      std::error_code read_ec;
      const fs::path target = fs::read_symlink(path, read_ec);
      refuse("is a dangling symbolic link: its target '" + (read_ec ? std::string("?") : target.string()) +
             "' does not exist");
    }
    if (ec) refuse("is a symbolic link that cannot be resolved: " + ec.message());
  }
  const fs::file_status status = fs::status(resolved, ec);
  if (ec) refuse("cannot be examined: " + ec.message());
  if (!fs::is_regular_file(status)) {
    refuse(std::string("is ") + type_name(status.type()) + (resolved == path ? "" : " (" + resolved.string() + ")") +
           ", not a plugin file");
  }
  return resolved;
}

// Why anyone could replace the plugin: the file, or a directory holding the entry or the file,
// is writable by everyone. Empty when none is.
std::vector<std::string> insecure_parts(const fs::path& entry, const fs::path& resolved, mode_t file_mode) {
  std::vector<std::string> parts;
  if ((file_mode & S_IWOTH) != 0) parts.push_back("it is writable by everyone (mode " + mode_str(file_mode) + ")");
  std::vector<fs::path> dirs{entry.parent_path().empty() ? fs::path(".") : entry.parent_path()};
  if (resolved.parent_path() != dirs.front()) dirs.push_back(resolved.parent_path());
  for (const fs::path& dir : dirs) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0 && (st.st_mode & S_IWOTH) != 0) {
      parts.push_back("it lies in " + dir.string() + ", a directory writable by everyone (mode " + mode_str(st.st_mode) +
                      ")");
    }
  }
  return parts;
}

// An open file, closed on scope exit, read at explicit offsets within its size.
class ElfFile {
 public:
  explicit ElfFile(const fs::path& path) {
    // O_NONBLOCK: a FIFO put in the file's place since it was checked must not block the host.
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd_ < 0) refuse("cannot be opened for reading: " + std::string(std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd_, &st) != 0) refuse("cannot be examined: " + std::string(std::strerror(errno)));
    if (!S_ISREG(st.st_mode)) refuse("is not a regular file");
    size_ = static_cast<std::uint64_t>(st.st_size);
    mode_ = st.st_mode;
  }
  ~ElfFile() { ::close(fd_); }
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;

  std::uint64_t size() const { return size_; }
  mode_t mode() const { return mode_; }

  // True when [offset, offset + n) lies within the file.
  bool within(std::uint64_t offset, std::uint64_t n) const { return offset <= size_ && n <= size_ - offset; }

  void read(void* out, std::uint64_t n, std::uint64_t offset, const char* what) const {
    auto* p = static_cast<char*>(out);
    while (n > 0) {
      const ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        refuse(std::string("cannot be read (") + what + "): " + (got < 0 ? std::strerror(errno) : "unexpected end of file"));
      }
      p += got;
      n -= static_cast<std::uint64_t>(got);
      offset += static_cast<std::uint64_t>(got);
    }
  }

 private:
  int fd_ = -1;
  std::uint64_t size_ = 0;
  mode_t mode_ = 0;
};

std::string span_str(std::uint64_t offset, std::uint64_t n) {
  return "bytes [" + std::to_string(offset) + ", " + std::to_string(offset + n) + ")";
}

Ehdr check_header(const ElfFile& file) {
  Ehdr h{};
  if (file.size() < sizeof(Ehdr)) {
    refuse("is " + bytes_str(file.size()) + " long, shorter than an ELF header (" + bytes_str(sizeof(Ehdr)) +
           "): not a shared object");
  }
  file.read(&h, sizeof h, 0, "the ELF header");
  if (std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) {
    refuse("is not an ELF file (it does not start with the bytes 0x7f 'E' 'L' 'F'): not a shared object");
  }
  if (h.e_ident[EI_CLASS] != kElfClass) {
    const auto bits = [](unsigned char c) { return c == ELFCLASS64 ? "64-bit" : c == ELFCLASS32 ? "32-bit" : "unknown-class"; };
    refuse(std::string("is a ") + bits(h.e_ident[EI_CLASS]) + " ELF file, but this host loads " + bits(kElfClass) +
           " shared objects");
  }
  if (h.e_ident[EI_DATA] != kElfData) refuse("is an ELF file of the other byte order than this machine's");
  if (h.e_type != ET_DYN) {
    const char* kind = h.e_type == ET_EXEC ? " (an executable)" : h.e_type == ET_REL ? " (an object file)" : "";
    refuse("is an ELF file of type " + std::to_string(h.e_type) + kind + ", not a shared object (type " +
           std::to_string(ET_DYN) + ")");
  }
  if (kElfMachine >= 0 && h.e_machine != kElfMachine) {
    refuse("is built for ELF machine " + std::to_string(h.e_machine) + ", not this machine's (" +
           std::to_string(kElfMachine) + ")");
  }
  return h;
}

std::vector<Phdr> check_segments(const ElfFile& file, const Ehdr& h) {
  if (h.e_phnum == 0) refuse("is an ELF file without program headers: nothing to load");
  if (h.e_phentsize != sizeof(Phdr)) {
    refuse("declares program headers of " + bytes_str(h.e_phentsize) + "; this host's are " + bytes_str(sizeof(Phdr)));
  }
  const std::uint64_t table = std::uint64_t{h.e_phnum} * sizeof(Phdr);
  if (!file.within(h.e_phoff, table)) {
    refuse("is truncated: its program headers span " + span_str(h.e_phoff, table) + ", but the file has " +
           bytes_str(file.size()));
  }
  std::vector<Phdr> segments(h.e_phnum);
  file.read(segments.data(), table, h.e_phoff, "the program headers");
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const Phdr& p = segments[i];
    if (p.p_filesz > 0 && !file.within(p.p_offset, p.p_filesz)) {
      refuse("is truncated: its " + std::string(p.p_type == PT_LOAD ? "loadable " : "") + "segment " + std::to_string(i) +
             " spans " + span_str(p.p_offset, p.p_filesz) + ", but the file has " + bytes_str(file.size()));
    }
  }
  return segments;
}

// The file offset holding `n` bytes at virtual address `address`, when a loadable segment has
// them in the file.
std::optional<std::uint64_t> file_offset(const std::vector<Phdr>& segments, std::uint64_t address, std::uint64_t n) {
  for (const Phdr& p : segments) {
    if (p.p_type != PT_LOAD || address < p.p_vaddr) continue;
    const std::uint64_t into = address - p.p_vaddr;
    if (into <= p.p_filesz && n <= p.p_filesz - into) return p.p_offset + into;
  }
  return std::nullopt;
}

std::optional<plugin_abi::AbiFacts> read_facts(const ElfFile& file, const Ehdr& h, const std::vector<Phdr>& segments) {
  if (h.e_shoff == 0 || h.e_shnum == 0 || h.e_shentsize != sizeof(Shdr)) return std::nullopt;
  const std::uint64_t table = std::uint64_t{h.e_shnum} * sizeof(Shdr);
  if (!file.within(h.e_shoff, table)) return std::nullopt;
  std::vector<Shdr> sections(h.e_shnum);
  file.read(sections.data(), table, h.e_shoff, "the section headers");
  for (const Shdr& symtab : sections) {
    if (symtab.sh_type != SHT_DYNSYM || symtab.sh_entsize != sizeof(Sym) || symtab.sh_link >= sections.size()) continue;
    const Shdr& strtab = sections[symtab.sh_link];
    if (strtab.sh_type != SHT_STRTAB || !file.within(symtab.sh_offset, symtab.sh_size) ||
        !file.within(strtab.sh_offset, strtab.sh_size) || symtab.sh_size > kMaxSymbolTableBytes ||
        strtab.sh_size > kMaxSymbolTableBytes) {
      return std::nullopt;
    }
    std::vector<Sym> symbols(symtab.sh_size / sizeof(Sym));
    file.read(symbols.data(), symbols.size() * sizeof(Sym), symtab.sh_offset, "the dynamic symbols");
    std::string names(strtab.sh_size, '\0');
    file.read(names.data(), names.size(), strtab.sh_offset, "the dynamic symbol names");
    const std::string_view wanted = plugin_abi::kAbiFactsSymbol;
    for (const Sym& sym : symbols) {
      if (sym.st_name >= names.size() || sym.st_shndx == SHN_UNDEF) continue;
      const char* name = names.data() + sym.st_name;
      if (std::string_view(name, strnlen(name, names.size() - sym.st_name)) != wanted) continue;
      const std::uint64_t n = std::min<std::uint64_t>(sym.st_size, sizeof(plugin_abi::AbiFacts));
      const auto offset = file_offset(segments, sym.st_value, n);
      if (n < 2 * sizeof(std::uint32_t) || !offset) return std::nullopt;
      plugin_abi::AbiFacts facts{};
      file.read(&facts, n, *offset, "the ABI facts");
      return facts;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

CheckedFile check_plugin_file(const std::filesystem::path& path, bool allow_insecure) {
  CheckedFile out;
  out.resolved = resolve(path);
  const ElfFile file(out.resolved);
  const std::vector<std::string> insecure = insecure_parts(path, out.resolved, file.mode());
  std::string why;
  for (const std::string& part : insecure) why += (why.empty() ? "" : ", and ") + part;
  if (!insecure.empty() && !allow_insecure) {
    refuse("is refused: " + why + ", so anyone on this machine could replace it with code of their own; remove "
           "that write permission, or set allow_insecure_plugins = true in the config (or "
           "TILEOPS_ALLOW_INSECURE_PLUGINS=1) to load it anyway");
  }
  if (!insecure.empty()) out.warnings.push_back("loaded although " + why + ", because allow_insecure_plugins is set");
  const Ehdr header = check_header(file);
  const std::vector<Phdr> segments = check_segments(file, header);
  out.facts = read_facts(file, header, segments);
  return out;
}

}  // namespace tileops::plugin
