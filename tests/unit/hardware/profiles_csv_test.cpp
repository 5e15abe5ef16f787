// The profile tables (hardware/profiles.h) are read by the project's CSV reader
// (sim/base/line_reader.h): the line ends, byte-order marks and header mistakes a spreadsheet
// export arrives with give the same rows, or the same refusal, as the dataset and trace readers.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "hardware/profiles.h"
#include "sim/base/error.h"

namespace servesim::hardware {
namespace {

const std::string kHeader =
    "gpu,kind,dtype,model,tp,op,m_tokens,n,k,batch,q_len,kv_len,q_heads,kv_heads,head_dim,"
    "time_us,tflops,gbps";
const std::string kRow1 = "h100,linear,bf16,m,1,qkv,1,6144,4096,,,,,,,21.20,,";
const std::string kRow2 = "h100,linear,bf16,m,1,qkv,8,6144,4096,,,,,,,30.5,,";

std::string write_bytes(const std::string& name, const std::string& bytes) {
  const auto p = std::filesystem::temp_directory_path() / name;
  std::ofstream(p, std::ios::binary) << bytes;
  return p.string();
}

TEST_CASE("profile CSV: a UTF-8 byte-order mark, CRLF and lone CR line ends read as plain LF",
          "[kernels][csv]") {
  const std::vector<KernelRow> plain = read_kernel_csv(
      write_bytes("servesim_csv_lf.csv", kHeader + "\n" + kRow1 + "\n" + kRow2 + "\n"));
  REQUIRE(plain.size() == 2);
  CHECK(plain[0].time_s == Approx(21.20e-6).epsilon(1e-12));
  CHECK(plain[1].m_tokens == 8);
  for (const auto& [name, bytes] :
       {std::pair{"servesim_csv_bom_crlf.csv",
                  "\xEF\xBB\xBF" + kHeader + "\r\n" + kRow1 + "\r\n" + kRow2 + "\r\n"},
        std::pair{"servesim_csv_cr.csv", kHeader + "\r" + kRow1 + "\r" + kRow2 + "\r"}}) {
    INFO(name);
    const std::vector<KernelRow> rows = read_kernel_csv(write_bytes(name, bytes));
    REQUIRE(rows.size() == plain.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      CHECK(rows[i].m_tokens == plain[i].m_tokens);
      CHECK(rows[i].time_s == plain[i].time_s);
    }
  }
}

TEST_CASE("profile CSV: a UTF-16 file and a semicolon-separated header are refused by name",
          "[kernels][csv]") {
  const std::string utf16 =
      write_bytes("servesim_csv_utf16.csv", std::string("\xFF\xFE", 2) + "g\0p\0u\0\n\0");
  REQUIRE_THROWS_WITH(read_kernel_csv(utf16),
                      Catch::Contains("servesim_csv_utf16.csv:1: the file is UTF-16 text") &&
                          Catch::Contains("save it as CSV UTF-8"));
  const std::string semi = write_bytes("servesim_csv_semicolon.csv", "gpu;kind;time_us\nh;l;1\n");
  REQUIRE_THROWS_WITH(read_kernel_csv(semi),
                      Catch::Contains("servesim_csv_semicolon.csv:1: header") &&
                          Catch::Contains("separated by ';'"));
}

}  // namespace
}  // namespace servesim::hardware
