//! Arithmetic on [`Complex64`] and [`Complex128`] (`+ - * /` and negation),
//! with `std::complex`'s formulas, so kernels can be generic over real and
//! complex element types.

use std::ops::{Add, Div, Mul, Neg, Sub};

use super::{Complex64, Complex128};

macro_rules! complex_ops {
    ($c:ident, $f:ty) => {
        impl Add for $c {
            type Output = $c;
            #[inline]
            fn add(self, o: $c) -> $c {
                $c::new(self.re + o.re, self.im + o.im)
            }
        }
        impl Sub for $c {
            type Output = $c;
            #[inline]
            fn sub(self, o: $c) -> $c {
                $c::new(self.re - o.re, self.im - o.im)
            }
        }
        impl Mul for $c {
            type Output = $c;
            #[inline]
            fn mul(self, o: $c) -> $c {
                $c::new(
                    self.re * o.re - self.im * o.im,
                    self.re * o.im + self.im * o.re,
                )
            }
        }
        impl Div for $c {
            type Output = $c;
            /// Smith's algorithm (as Eigen's `std::complex` division).
            #[inline]
            fn div(self, o: $c) -> $c {
                if o.re.abs() >= o.im.abs() {
                    let r = o.im / o.re;
                    let d = o.re + r * o.im;
                    $c::new((self.re + self.im * r) / d, (self.im - self.re * r) / d)
                } else {
                    let r = o.re / o.im;
                    let d = o.im + r * o.re;
                    $c::new((self.re * r + self.im) / d, (self.im * r - self.re) / d)
                }
            }
        }
        impl Neg for $c {
            type Output = $c;
            #[inline]
            fn neg(self) -> $c {
                $c::new(-self.re, -self.im)
            }
        }
        impl $c {
            /// The modulus `|z|`, computed without undue overflow.
            #[inline]
            pub fn norm(self) -> $f {
                self.re.hypot(self.im)
            }
        }
    };
}

complex_ops!(Complex64, f32);
complex_ops!(Complex128, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_matches_the_textbook_formulas() {
        let a = Complex64::new(1.0, 2.0);
        let b = Complex64::new(3.0, -1.0);
        assert_eq!(a + b, Complex64::new(4.0, 1.0));
        assert_eq!(a - b, Complex64::new(-2.0, 3.0));
        assert_eq!(a * b, Complex64::new(5.0, 5.0));
        let q = (a * b) / b;
        assert!((q.re - 1.0).abs() < 1e-6 && (q.im - 2.0).abs() < 1e-6);
        assert_eq!(-a, Complex64::new(-1.0, -2.0));
        assert_eq!(Complex128::new(3.0, 4.0).norm(), 5.0);
        let small = Complex128::new(1.0, 1.0) / Complex128::new(1e-300, 1e300);
        assert!(small.re.is_finite() && small.im.is_finite());
    }
}
