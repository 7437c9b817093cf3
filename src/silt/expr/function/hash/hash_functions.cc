// Hashing and encoding functions: md5, sha1/sha, sha2(x, bits) (lower-case
// hex digests of the bytes, via OpenSSL's libcrypto), hex (upper-case hex of
// a string's bytes or of a BIGINT's two's complement, as Long.toHexString)
// and base64 (RFC 4648 with padding, unchunked). Strings are hashed as their
// UTF-8 bytes, as Spark's implicit STRING -> BINARY cast does.
#include <openssl/evp.h>

#include <string>
#include <string_view>

#include "silt/columnar/builder.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/executor.h"
#include "silt/expr/kernel/function_registry.h"
#include "silt/expr/kernel/type_util.h"
#include "silt/expr/parse/ast.h"

namespace silt::expr {

namespace {

using columnar::ColumnPtr;

constexpr char kLowerHex[] = "0123456789abcdef";
constexpr char kUpperHex[] = "0123456789ABCDEF";

void AppendHex(const unsigned char* bytes, size_t n, const char* digits, StringAppender& out) {
  char* dst = out.Extend(static_cast<int64_t>(2 * n));
  for (size_t i = 0; i < n; ++i) {
    dst[2 * i] = digits[bytes[i] >> 4];
    dst[2 * i + 1] = digits[bytes[i] & 0xF];
  }
}

// Digest of every row; `bits` (sha2) is a constant or per-row INT, and an
// unsupported bit length gives NULL, as in Spark.
template <int kKind>  // 0 = md5, 1 = sha1, 2 = sha2
Result<ColumnPtr> DigestKernel(const KernelInfo& info, const ExecArgs& args) {
  auto digest = [&info](std::string_view data, const EVP_MD* md, StringAppender& out,
                        RowContext& ctx) {
    unsigned char bytes[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (EVP_Digest(data.data(), data.size(), bytes, &size, md, nullptr) != 1) {
      ctx.Fail(Status::Internal("OpenSSL digest failed in '", info.sql, "'"));
      return;
    }
    AppendHex(bytes, size, kLowerHex, out);
  };
  if constexpr (kKind == 2) {
    return BinaryExecutor<std::string_view, int32_t, std::string_view>::ExecuteChecked(
        info, args, [&](std::string_view data, int32_t bits, StringAppender& out, RowContext& ctx) {
          const EVP_MD* md = nullptr;
          switch (bits) {
            case 0:
            case 256: md = EVP_sha256(); break;
            case 224: md = EVP_sha224(); break;
            case 384: md = EVP_sha384(); break;
            case 512: md = EVP_sha512(); break;
            default: ctx.SetNull(); return;
          }
          digest(data, md, out, ctx);
        });
  } else {
    const EVP_MD* md = kKind == 0 ? EVP_md5() : EVP_sha1();
    return UnaryExecutor<std::string_view, std::string_view>::ExecuteChecked(
        info, args, [&](std::string_view data, StringAppender& out, RowContext& ctx) {
          digest(data, md, out, ctx);
        });
  }
}

Status CoerceBinary(CallSite& site, size_t index) {
  const DataType& t = *site.args[index]->type();
  if (t.id() == TypeId::kBinary || t.id() == TypeId::kString) return Status::OK();
  if (t.id() != TypeId::kNull) return ArgTypeError(site, index, "BINARY or STRING");
  SILT_ASSIGN_OR_RETURN(site.args[index], ImplicitCast(std::move(site.args[index]),
                                                       DataType::Binary(), site.options));
  return Status::OK();
}

template <int kKind>
Result<BoundNodePtr> BindDigest(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, kKind == 2 ? 2 : 1, kKind == 2 ? 2 : 1));
  SILT_RETURN_NOT_OK(CoerceBinary(site, 0));
  bool nullable = AnyNullable(site.args);
  if constexpr (kKind == 2) {
    const DataType& t = *site.args[1]->type();
    if (!t.is_integral() && t.id() != TypeId::kNull) return ArgTypeError(site, 1, "INT");
    SILT_ASSIGN_OR_RETURN(site.args[1],
                          ImplicitCast(std::move(site.args[1]), DataType::Int(), site.options));
    nullable = true;
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  return MakeBoundCall(site, DataType::String(), nullable, std::move(site.args),
                       &DigestKernel<kKind>, std::move(sql));
}

Result<ColumnPtr> HexBytesKernel(const KernelInfo& info, const ExecArgs& args) {
  return UnaryExecutor<std::string_view, std::string_view>::Execute(
      info, args, [](std::string_view data, StringAppender& out) {
        AppendHex(reinterpret_cast<const unsigned char*>(data.data()), data.size(), kUpperHex, out);
      });
}

Result<ColumnPtr> HexLongKernel(const KernelInfo& info, const ExecArgs& args) {
  return UnaryExecutor<int64_t, std::string_view>::Execute(
      info, args, [](int64_t in, StringAppender& out) {
        char buffer[16];
        uint64_t v = static_cast<uint64_t>(in);
        int pos = 16;
        do {
          buffer[--pos] = kUpperHex[v & 0xF];
          v >>= 4;
        } while (v != 0);
        out.Append(std::string_view(buffer + pos, static_cast<size_t>(16 - pos)));
      });
}

Result<BoundNodePtr> BindHex(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  const DataType& t = *site.args[0]->type();
  KernelFn fn = &HexBytesKernel;
  if (t.is_integral()) {
    SILT_ASSIGN_OR_RETURN(site.args[0],
                          ImplicitCast(std::move(site.args[0]), DataType::Long(), site.options));
    fn = &HexLongKernel;
  } else if (t.id() != TypeId::kString && t.id() != TypeId::kBinary) {
    return ArgTypeError(site, 0, "BIGINT, STRING or BINARY");
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::String(), nullable, std::move(site.args), fn,
                       std::move(sql));
}

Result<ColumnPtr> Base64Kernel(const KernelInfo& info, const ExecArgs& args) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  return UnaryExecutor<std::string_view, std::string_view>::Execute(
      info, args, [](std::string_view data, StringAppender& out) {
        char* dst = out.Extend(static_cast<int64_t>((data.size() + 2) / 3 * 4));
        size_t i = 0;
        for (; i + 3 <= data.size(); i += 3) {
          uint32_t v = (static_cast<uint8_t>(data[i]) << 16) |
                       (static_cast<uint8_t>(data[i + 1]) << 8) | static_cast<uint8_t>(data[i + 2]);
          *dst++ = kAlphabet[(v >> 18) & 63];
          *dst++ = kAlphabet[(v >> 12) & 63];
          *dst++ = kAlphabet[(v >> 6) & 63];
          *dst++ = kAlphabet[v & 63];
        }
        if (i < data.size()) {
          uint32_t v = static_cast<uint32_t>(static_cast<uint8_t>(data[i])) << 16;
          if (i + 1 < data.size()) {
            v |= static_cast<uint32_t>(static_cast<uint8_t>(data[i + 1])) << 8;
          }
          *dst++ = kAlphabet[(v >> 18) & 63];
          *dst++ = kAlphabet[(v >> 12) & 63];
          *dst++ = i + 1 < data.size() ? kAlphabet[(v >> 6) & 63] : '=';
          *dst++ = '=';
        }
      });
}

Result<BoundNodePtr> BindBase64(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  SILT_RETURN_NOT_OK(CoerceBinary(site, 0));
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::String(), nullable, std::move(site.args), &Base64Kernel,
                       std::move(sql));
}

// unbase64(str): java.util.Base64's MIME decoder, as Spark uses it:
// characters outside the alphabet are skipped and '=' ends the data.
Result<ColumnPtr> Unbase64Kernel(const KernelInfo& info, const ExecArgs& args) {
  auto op = [&info](std::string_view text, StringAppender& out, RowContext& ctx) {
    uint32_t acc = 0;
    int bits = 0;
    int in_unit = 0;  // characters of the current 4-character unit
    const char* error = nullptr;
    for (size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      int v;
      if (c == '=') {
        // java.util.Base64: "xx==" and "xxx=" end the data; anything else
        // around '=' is an error.
        if (in_unit == 0 || in_unit == 1 ||
            (in_unit == 2 && (i + 1 >= text.size() || text[i + 1] != '='))) {
          error = in_unit == 1 ? "Last unit does not have enough valid bits"
                               : "Input byte array has wrong 4-byte ending unit";
        }
        in_unit = 0;
        break;
      }
      if (c >= 'A' && c <= 'Z') {
        v = c - 'A';
      } else if (c >= 'a' && c <= 'z') {
        v = c - 'a' + 26;
      } else if (c >= '0' && c <= '9') {
        v = c - '0' + 52;
      } else if (c == '+') {
        v = 62;
      } else if (c == '/') {
        v = 63;
      } else {
        continue;
      }
      in_unit = (in_unit + 1) % 4;
      acc = (acc << 6) | static_cast<uint32_t>(v);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out.Push(static_cast<char>((acc >> bits) & 0xFF));
      }
    }
    if (error == nullptr && in_unit == 1) error = "Last unit does not have enough valid bits";
    if (error != nullptr) {
      ctx.Fail(Status::InvalidArgument("unbase64: ", error, " in '", text, "' (row ", ctx.row(),
                                       ") in '", info.sql, "'"));
    }
  };
  return UnaryExecutor<std::string_view, std::string_view>::ExecuteChecked(info, args, op);
}

Result<BoundNodePtr> BindUnbase64(CallSite& site) {
  SILT_RETURN_NOT_OK(CheckArgCount(site, 1, 1));
  const DataType& t = *site.args[0]->type();
  if (t.id() != TypeId::kString) {
    if (t.is_nested()) return ArgTypeError(site, 0, "STRING");
    SILT_ASSIGN_OR_RETURN(site.args[0],
                          ImplicitCast(std::move(site.args[0]), DataType::String(), site.options));
  }
  std::string sql = PrettyCall(site.name, ArgSqls(site.args));
  bool nullable = AnyNullable(site.args);
  return MakeBoundCall(site, DataType::Binary(), nullable, std::move(site.args), &Unbase64Kernel,
                       std::move(sql));
}

}  // namespace

void RegisterHashFunctions(FunctionRegistry* registry) {
  registry->Register("md5", &BindDigest<0>);
  registry->Register("sha1", &BindDigest<1>);
  registry->Register("sha", &BindDigest<1>);
  registry->Register("sha2", &BindDigest<2>);
  registry->Register("hex", &BindHex);
  registry->Register("base64", &BindBase64);
  registry->Register("unbase64", &BindUnbase64);
}

}  // namespace silt::expr
