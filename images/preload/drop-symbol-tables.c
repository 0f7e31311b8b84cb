/*
 * Preloaded into every process of the images (LD_PRELOAD, set in images/Dockerfile).
 *
 * node exports every symbol of V8, libuv and OpenSSL for native addons: its dynamic symbol
 * tables (.gnu.hash, .dynsym, .dynstr) are 4-7 MB. The dynamic loader reads them once, to bind
 * the symbols of the libraries node uses, and the kernel maps the pages around each read
 * (fault-around), so nearly all of them stay in the process's resident set: 4-6 MB of every node
 * process, a tenth to a seventh of a bare one. When the program was linked to bind every symbol
 * at start (BIND_NOW, as node is), nothing reads them again.
 *
 * This constructor runs after the loader has bound everything and drops those pages from the
 * process's page tables (madvise MADV_DONTNEED). They are clean pages of the binary's file, in a
 * read-only segment: nothing is lost, the kernel's page cache keeps them (shared by every process
 * of the binary), and a later reader (dlsym, an addon's dlopen, a debugger) faults them back in.
 * It writes nothing, and does nothing for a program bound lazily (sleep in the images), for
 * tables outside a read-only segment, or when KUBE_DNS_KEEP_SYMBOL_TABLES is set (to anything but
 * 0 or false). (dnsmasq is
 * bound at start too: its tables are a page.)
 * docs/footprint.md, "The dynamic loader's tables", has the figures.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

/* The read-only segment of the object that holds [lo, hi), or NULL. */
static const ElfW(Phdr) *read_only_segment(const struct dl_phdr_info *info, uintptr_t lo, uintptr_t hi) {
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
    if (lo >= start && hi <= end) return (ph->p_flags & (PF_W | PF_X)) == 0 ? ph : NULL;
  }
  return NULL;
}

/* A table's address: absolute once the loader has adjusted the dynamic section (it does so on
 * most targets), an offset from the load address otherwise. */
static uintptr_t table_address(const struct dl_phdr_info *info, uintptr_t v) {
  if (read_only_segment(info, v, v + 1) || info->dlpi_addr == 0) return v;
  return v + info->dlpi_addr;
}

static int drop_main_program_tables(struct dl_phdr_info *info, size_t size, void *unused) {
  (void)size;
  (void)unused;
  const ElfW(Dyn) *dyn = NULL;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (dyn == NULL) return 1;
  uintptr_t tables[4] = {0}; /* DT_GNU_HASH, DT_HASH, DT_SYMTAB, DT_STRTAB */
  uintptr_t strsz = 0, flags = 0, flags1 = 0;
  for (; dyn->d_tag != DT_NULL; dyn++) {
    switch (dyn->d_tag) {
      case DT_GNU_HASH: tables[0] = dyn->d_un.d_ptr; break;
      case DT_HASH: tables[1] = dyn->d_un.d_ptr; break;
      case DT_SYMTAB: tables[2] = dyn->d_un.d_ptr; break;
      case DT_STRTAB: tables[3] = dyn->d_un.d_ptr; break;
      case DT_STRSZ: strsz = dyn->d_un.d_val; break;
      case DT_FLAGS: flags = dyn->d_un.d_val; break;
      case DT_FLAGS_1: flags1 = dyn->d_un.d_val; break;
    }
  }
  const char *bind_now = getenv("LD_BIND_NOW");
  if (!(flags & DF_BIND_NOW) && !(flags1 & DF_1_NOW) && !(bind_now && *bind_now)) return 1;
  if (tables[2] == 0 || tables[3] == 0 || strsz == 0) return 1;
  /* the tables lie together at the start of the binary (the linker's default layout): drop the
   * span from the first to the end of the string table, only if one read-only segment holds it */
  uintptr_t lo = UINTPTR_MAX;
  for (int i = 0; i < 4; i++)
    if (tables[i] != 0 && table_address(info, tables[i]) < lo) lo = table_address(info, tables[i]);
  uintptr_t hi = table_address(info, tables[3]) + strsz;
  if (hi <= lo || read_only_segment(info, lo, hi) == NULL) return 1;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  lo = (lo + page - 1) & ~(page - 1); /* whole pages only: the first holds the ELF headers */
  hi &= ~(page - 1);
  if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
  return 1; /* the main program comes first: stop there */
}

/* KUBE_DNS_KEEP_SYMBOL_TABLES: any value but empty, "0" and "false" keeps the tables. */
static int keep_tables(void) {
  const char *v = getenv("KUBE_DNS_KEEP_SYMBOL_TABLES");
  return v != NULL && *v != '\0' && strcmp(v, "0") != 0 && strcasecmp(v, "false") != 0;
}

__attribute__((constructor)) static void drop_symbol_tables(void) {
  if (keep_tables()) return;
  dl_iterate_phdr(drop_main_program_tables, NULL);
}
