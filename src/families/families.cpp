// The model families, one registration line each (family.h says what a family is).
#include "families/families.h"

#include <string>

#include "attnlite/error.h"

namespace attnlite::families {

extern const Family transformer;  // src/families/transformer/: d2l 10.7, the book's translator
extern const Family bahdanau;     // src/families/bahdanau/: d2l 10.4, RNN + additive attention
extern const Family lm;           // src/families/lm/: a decoder-only language model
extern const Family vit;          // src/families/vit/: a Vision Transformer

Registered all() {
  static constexpr const Family* kFamilies[] = {&transformer, &bahdanau, &lm, &vit};
  return {kFamilies, sizeof kFamilies / sizeof kFamilies[0]};
}

const Family* find(std::string_view name) {
  for (const Family* f : all())
    if (name == f->name) return f;
  return nullptr;
}

std::string names() {
  std::string s;
  const Registered a = all();
  for (size_t i = 0; i < a.size(); ++i)
    s += (i ? (i + 1 == a.size() ? " or " : ", ") : "") + std::string(a[i]->name);
  return s;
}

std::unique_ptr<drivers::Seq2SeqDriver> FamilyModel::seq2seq_driver(const ops::Ops&,
                                                                    const drivers::Limits&) const {
  throw Error("this model does not translate");
}
std::unique_ptr<drivers::TextDriver> FamilyModel::text_driver(const ops::Ops&) const {
  throw Error("this model does not generate text");
}
std::unique_ptr<drivers::ImageDriver> FamilyModel::image_driver(const ops::Ops&, int) const {
  throw Error("this model does not classify images");
}

}  // namespace attnlite::families
